import ImageTableCore
/// The state of one validation run: the file, the options, and the diagnostics so far.
///
/// A class so that the walk's many small readers can report without threading `inout` through
/// every call; it never leaves the validator.
final class ValidationContext {
    let file: String
    let directory: String
    let options: ValidationOptions
    /// The absolute directory `output` and `sources` must stay inside.
    let root: String
    /// The text by lines, for hints that look at how a line was written and for the line each
    /// diagnostic quotes.
    let lines: SourceLines
    private(set) var diagnostics: [Diagnostic] = []
    private var truncated = false
    /// Each problem reported so far, by place, code and message: a value that a merge key brings
    /// into several formats is read once per format, and the same line was printed once each.
    private var reported = Set<String>()
    /// Every error reported, listed or not (a repeat, or past the limit).
    private var errorsReported = 0

    init(file: String, directory: String, options: ValidationOptions, lines: SourceLines) {
        self.file = file
        self.directory = directory
        self.options = options
        root = options.root.map { ManifestValidator.absolutePath($0) } ?? directory
        self.lines = lines
    }

    /// Records a problem with its code's default severity.
    func report(_ code: DiagnosticCode, _ message: String, at location: SourceLocation, keyPath: String) {
        // Counted whether or not it is listed: readers ask whether a step added an error, and a
        // format whose anchored value repeats another's error (not listed again) still has one.
        if code.defaultSeverity == .error { errorsReported += 1 }
        guard !truncated, reported.insert("\(location.line):\(location.column) \(code.rawValue) \(message)").inserted else { return }
        guard diagnostics.count < ManifestLimits.maxDiagnostics else {
            truncated = true
            diagnostics.append(Diagnostic(.error, .tooManyProblems,
                                          "more than \(ManifestLimits.maxDiagnostics) problems; the rest are not listed",
                                          file: file, location: location, keyPath: keyPath))
            return
        }
        var diagnostic = Diagnostic(code.defaultSeverity, code, Self.printable(message), file: file, location: location,
                                    keyPath: Self.printable(keyPath))
        if location.line <= lines.count, lines.bytes(ofLine: location.line).count <= Self.maxQuotedLineBytes {
            diagnostic.sourceLine = lines.string(ofLine: location.line)
        }
        diagnostics.append(diagnostic)
    }

    /// The longest line a diagnostic carries for its excerpt: a hostile one-line megabyte would
    /// otherwise be copied into each of up to 200 diagnostics.
    static let maxQuotedLineBytes = 4096

    /// Messages quote what the manifest says, and a manifest can say anything: control and
    /// bidirectional characters are escaped, and hostile lengths cut.
    static func printable(_ text: String, limit: Int = 1000) -> String {
        PrintableText.escaped(text, limit: limit)
    }

    /// Whether the diagnostic limit is reached, so that callers can skip work whose only
    /// product would be another diagnostic (suggestions cost an edit distance each).
    var isFull: Bool { truncated }

    /// Whether an error has been reported so far.
    var hasErrors: Bool { errorsReported > 0 }

    /// The number of errors reported so far, listed or not, to tell whether a step added any.
    var errorCount: Int { errorsReported }

    /// The text of line `line`, without its line break.
    func sourceLine(_ line: Int) -> String { lines.string(ofLine: line) }
}

/// Dotted key paths: `families.users.formats.small.style`, `families.users.include[1]`.
extension String {
    func appendingKey(_ key: String) -> String { isEmpty ? key : self + "." + key }
    func appendingIndex(_ index: Int) -> String { self + "[\(index)]" }
}

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
    /// The text, for hints that look at how a line was written.
    let text: ArraySlice<UInt8>
    private(set) var diagnostics: [Diagnostic] = []
    private var truncated = false

    init(file: String, directory: String, options: ValidationOptions, text: ArraySlice<UInt8>) {
        self.file = file
        self.directory = directory
        self.options = options
        root = options.root.map { ManifestValidator.absolutePath($0) } ?? directory
        self.text = text
    }

    /// Records a problem with its code's default severity.
    func report(_ code: DiagnosticCode, _ message: String, at location: SourceLocation, keyPath: String) {
        guard !truncated else { return }
        guard diagnostics.count < ManifestLimits.maxDiagnostics else {
            truncated = true
            diagnostics.append(Diagnostic(.error, .tooManyProblems,
                                          "more than \(ManifestLimits.maxDiagnostics) problems; the rest are not listed",
                                          file: file, location: location, keyPath: keyPath))
            return
        }
        diagnostics.append(Diagnostic(code.defaultSeverity, code, Self.printable(message), file: file, location: location,
                                      keyPath: Self.printable(keyPath)))
    }

    /// Messages quote what the manifest says, and a manifest can say anything: control and
    /// bidirectional characters are escaped, and hostile lengths cut.
    static func printable(_ text: String, limit: Int = 1000) -> String {
        PrintableText.escaped(text, limit: limit)
    }

    /// Whether the diagnostic limit is reached, so that callers can skip work whose only
    /// product would be another diagnostic (suggestions cost an edit distance each).
    var isFull: Bool { truncated }

    /// Whether an error has been reported so far.
    var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The number of errors so far, to tell whether a step added any.
    var errorCount: Int { diagnostics.lazy.filter { $0.severity == .error }.count }

    /// The text of line `line`, without its line break.
    func sourceLine(_ line: Int) -> Substring {
        let lines = text.split(separator: 0x0A, maxSplits: line, omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return "" }
        return Substring(decoding: lines[line - 1], as: UTF8.self)
    }
}

/// Dotted key paths: `families.users.formats.small.style`, `families.users.include[1]`.
extension String {
    func appendingKey(_ key: String) -> String { isEmpty ? key : self + "." + key }
    func appendingIndex(_ index: Int) -> String { self + "[\(index)]" }
}

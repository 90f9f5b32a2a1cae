/// A line and column in a manifest, both counted from 1.
///
/// Columns count Unicode scalars, not bytes, as libyaml and editors do, so `é` is one column.
/// Problems that concern the whole file (it is empty, too large, unreadable) are placed at `1:1`.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// The column, from 1.
    public let column: Int

    /// Creates a location.
    ///
    /// - Parameters:
    ///   - line: the line, from 1.
    ///   - column: the column, from 1.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// The start of the file, where whole-file problems are reported.
    public static let start = SourceLocation(line: 1, column: 1)

    /// `line:column`.
    public var description: String { "\(line):\(column)" }

    /// Orders locations as they appear in the file.
    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// How serious a diagnostic is.
public enum Severity: String, Sendable, Codable, Comparable {
    /// The manifest is unusable; `imagetable validate` exits 1 and nothing can be baked.
    case error
    /// Probably a mistake, but the manifest is usable; an error under `--warnings-as-errors`.
    case warning

    /// Errors sort before warnings.
    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
}

/// One problem found in a manifest: what, where, and how serious.
///
/// Diagnostics are values so that every output (compiler-style text, JSON, GitHub annotations)
/// renders the same facts; the ``code`` is stable and documented in `docs/MANIFEST.md`, the
/// ``message`` is for people and may be reworded.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious the problem is.
    public var severity: Severity
    /// The stable, kebab-case identifier of the kind of problem.
    public var code: DiagnosticCode
    /// A sentence for people: the problem and, where there is one, the fix.
    public var message: String
    /// The manifest's path as the caller named it.
    public var file: String
    /// Where in the file the problem is.
    public var location: SourceLocation
    /// The dotted path of the key concerned, such as `families.users.formats.small.style`;
    /// empty for problems that concern the whole document.
    public var keyPath: String
    /// The text of the line at ``location``, without its line break, so that outputs can show
    /// it with a caret under the column; `nil` when the problem is not on a line of the text
    /// (the file is unreadable, too large, not UTF-8 or empty) or the line is over 4 KiB.
    public var sourceLine: String?

    /// Creates a diagnostic.
    ///
    /// - Parameters:
    ///   - severity: how serious it is.
    ///   - code: the kind of problem.
    ///   - message: the sentence for people.
    ///   - file: the manifest's path.
    ///   - location: where in the file.
    ///   - keyPath: the dotted key path, or empty.
    public init(_ severity: Severity, _ code: DiagnosticCode, _ message: String, file: String,
                location: SourceLocation, keyPath: String = "") {
        self.severity = severity
        self.code = code
        self.message = message
        self.file = file
        self.location = location
        self.keyPath = keyPath
    }

    /// The line, from 1.
    public var line: Int { location.line }
    /// The column, from 1.
    public var column: Int { location.column }

    /// `file:line:column: severity: message [code]`, the form compilers and editors recognise.
    public var description: String {
        "\(file):\(location.line):\(location.column): \(severity.rawValue): \(message) [\(code.rawValue)]"
    }
}

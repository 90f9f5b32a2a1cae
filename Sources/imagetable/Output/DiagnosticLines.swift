import Foundation
import ImageManifest
import ImageTableCore

/// The one-line forms of a diagnostic shared by the text and GitHub outputs.
enum DiagnosticLines {
    /// `file:line:column: severity: message [code]`, which compilers, editors and CI log
    /// scanners recognise; escaped for the terminal, since the file name and the values quoted
    /// in the message are whatever the manifest's author wrote.
    static func compilerStyle(_ d: Diagnostic) -> String { PrintableText.escaped(d.description) }

    /// The line a diagnostic points at, with a caret under its column, as compilers show it:
    ///
    /// ```
    ///     2 | output: "tables
    ///       |         ^
    /// ```
    ///
    /// The line is escaped like every other text, and the caret placed under the escaped form,
    /// counting the columns a terminal gives each character (``TerminalWidth``); a long line
    /// is cut around the column. `nil` when the diagnostic has no line.
    static func excerpt(_ d: Diagnostic) -> String? {
        guard let line = d.sourceLine else { return nil }
        let scalars = line.unicodeScalars
        let split = scalars.index(scalars.startIndex, offsetBy: min(max(d.column - 1, 0), scalars.count))
        var before = PrintableText.escaped(String(scalars[..<split]))
        var after = PrintableText.escaped(String(scalars[split...]))
        // A line of up to `excerptWidth` characters is shown whole; a longer one keeps that many
        // around the column, the side that has fewer given all of them (a cut at 80 on each
        // side had cut a 98-character line whose column was 90).
        if before.count + after.count > excerptWidth {
            let keepBefore = min(before.count, max(excerptWidth / 2, excerptWidth - after.count))
            let keepAfter = excerptWidth - keepBefore
            if before.count > keepBefore { before = "…" + before.suffix(keepBefore - 1) }
            if after.count > keepAfter { after = after.prefix(keepAfter - 1) + "…" }
        }
        let number = String(d.line)
        let width = max(5, number.count)
        let gutter = String(repeating: " ", count: width - number.count) + number + " | "
        // Under the column as a terminal shows it: a CJK character or an emoji takes two.
        return gutter + before + after + "\n" + String(repeating: " ", count: width) + " | "
            + String(repeating: " ", count: TerminalWidth.columns(before)) + "^"
    }

    /// The most characters an excerpt shows of a line.
    static let excerptWidth = 160

    /// A GitHub Actions workflow command: `::error file=…,line=…,col=…,title=…::message`.
    static func githubAnnotation(_ d: Diagnostic) -> String {
        let file = repositoryPath(d.file)
        let properties = "file=\(escapeProperty(file)),line=\(d.line),col=\(d.column),title=\(escapeProperty(d.code.rawValue))"
        return "::\(d.severity.rawValue) \(properties)::\(escapeData(d.message))"
    }

    /// A GitHub Actions workflow command without a position: `::error file=…,title=…::message`
    /// (a bake's failed source, a fatal error), or with no `file` when there is none.
    static func githubCommand(_ severity: String, file: String?, line: Int? = nil, column: Int? = nil, title: String, message: String) -> String {
        let position = (line.map { ["line=\($0)"] } ?? []) + (column.map { ["col=\($0)"] } ?? [])
        let properties = (file.map { ["file=\(escapeProperty($0))"] + position } ?? []) + ["title=\(escapeProperty(title))"]
        return "::\(severity) \(properties.joined(separator: ","))::\(escapeData(message))"
    }

    /// `path` as GitHub places an annotation: from the repository's root (`GITHUB_WORKSPACE`,
    /// which GitHub sets; else the working directory), with `..` and the symbolic links of its
    /// directories resolved, when it lies below it; else as given. A bake run in a subdirectory
    /// named its manifest `../site.yaml` or `sub/../site.yaml`, which GitHub cannot place. The
    /// file itself stays as named: a source that is a link leading outside the sources was
    /// annotated on its target, a file that may not be in the repository at all.
    static func repositoryPath(_ path: String) -> String {
        // Without trailing slashes (`sub/photos/`), whose bytes the name's were counted off.
        let absolute = String(PathBytes.trimmingTrailingSlashes(PathBytes.isAbsolute(path) ? path : workingDirectory + "/" + path))
        let name = String(PathBytes.lastName(absolute))
        // The directory as written, `..` and all: folding `config/..` before resolving the link
        // `config` named another directory than the file's.
        let full: String
        if [".", ".."].contains(name) || name.isEmpty {
            full = SourceScanner.resolvedPath(absolute)
        } else {
            let directory = SourceScanner.resolvedPath(String(decoding: absolute.utf8.dropLast(name.utf8.count), as: UTF8.self))
            full = (directory.hasSuffix("/") ? directory : directory + "/") + name
        }
        // Bytes, not Characters, on both ends: a name's bytes counted off its path's Characters
        // cut `photos/été.jpg` to `photo/`, and a name that begins with a combining mark makes
        // one Character of it and the slash before it, which no prefix ending in `/` matches.
        guard full.utf8.starts(with: repositoryRoot.utf8) else { return path }
        return String(decoding: full.utf8.dropFirst(repositoryRoot.utf8.count), as: UTF8.self)
    }

    /// The working directory, which no command changes.
    private static let workingDirectory = FileManager.default.currentDirectoryPath

    /// The repository's root, resolved and ending in `/`: found once, not for each of a bake's
    /// thousands of annotations.
    private static let repositoryRoot: String = {
        let workspace = ProcessInfo.processInfo.environment["GITHUB_WORKSPACE"].flatMap { $0.isEmpty ? nil : $0 }
        let base = SourceScanner.resolvedPath(workspace ?? workingDirectory)
        return base.hasSuffix("/") ? base : base + "/"
    }()

    /// "1 error, 2 warnings".
    static func counts(errors: Int, warnings: Int) -> String {
        "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
    }

    // GitHub's escaping rules for workflow commands: data escapes %, CR and LF; property values
    // also escape : and , which would otherwise end the value. Scalars, not Characters, because
    // "\r\n" is one Character.
    private static func escapeData(_ s: String) -> String {
        escape(s, ["%": "%25", "\r": "%0D", "\n": "%0A"])
    }

    private static func escapeProperty(_ s: String) -> String {
        escape(s, ["%": "%25", "\r": "%0D", "\n": "%0A", ":": "%3A", ",": "%2C"])
    }

    private static func escape(_ s: String, _ table: [Unicode.Scalar: String]) -> String {
        var result = ""
        let scalars = Array(s.unicodeScalars)
        for i in scalars.indices {
            if let replacement = table[scalars[i]] {
                result += replacement
            } else if let written = PrintableText.writtenOut(scalars, at: i) {
                // A job log is shown in a terminal-like view: other control and format
                // characters (escape sequences, bidirectional overrides) are written out.
                result += written
            } else {
                result.unicodeScalars.append(scalars[i])
            }
        }
        // GitHub's older commands and Azure Pipelines' are read anywhere in a line, as in text
        // output (``PrintableText/uncommanded(_:)``).
        return PrintableText.writingOutCommandMarkers(result)
    }
}

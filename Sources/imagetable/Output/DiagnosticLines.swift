import ImageManifest
import ImageTableCore

/// The one-line forms of a diagnostic shared by the text and GitHub outputs.
enum DiagnosticLines {
    /// `file:line:column: severity: message [code]`, which compilers, editors and CI log
    /// scanners recognise; escaped for the terminal, since the file name and the values quoted
    /// in the message are whatever the manifest's author wrote.
    static func compilerStyle(_ d: Diagnostic) -> String { PrintableText.escaped(d.description) }

    /// A GitHub Actions workflow command: `::error file=…,line=…,col=…,title=…::message`.
    static func githubAnnotation(_ d: Diagnostic) -> String {
        let properties = "file=\(escapeProperty(d.file)),line=\(d.line),col=\(d.column),title=\(escapeProperty(d.code.rawValue))"
        return "::\(d.severity.rawValue) \(properties)::\(escapeData(d.message))"
    }

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
        for scalar in s.unicodeScalars {
            if let replacement = table[scalar] { result += replacement } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}

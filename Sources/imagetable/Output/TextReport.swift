import ImageManifest
import ImageTableCore

/// `--format text`: compiler-style diagnostics, each with its line and a caret under the column,
/// then a status line per manifest and, for a valid manifest or one over `--max-disk` alone, its
/// plan (which shows the tables that take the space).
enum TextReport {
    static func render(_ reports: [ValidationReport]) -> String {
        var out = ""
        for report in reports {
            for d in report.diagnostics {
                out += DiagnosticLines.compilerStyle(d) + "\n"
                if let excerpt = DiagnosticLines.excerpt(d) { out += excerpt + "\n" }
            }
            out += statusLine(report) + "\n"
            if let manifest = report.plannedManifest { out += PlanTable.render(manifest) }
        }
        if reports.count > 1 { out += summaryLine(reports) + "\n" }
        return out
    }

    /// `demo.yaml: valid (0 errors, 1 warning)` or `bad.yaml: invalid (2 errors, 0 warnings)`.
    static func statusLine(_ report: ValidationReport) -> String {
        "\(PrintableText.escaped(report.file)): \(report.isValid ? "valid" : "invalid") (\(DiagnosticLines.counts(errors: report.errorCount, warnings: report.warningCount)))"
    }

    /// `3 manifests: 2 valid, 1 invalid`.
    static func summaryLine(_ reports: [ValidationReport]) -> String {
        let valid = reports.count { $0.isValid }
        return "\(reports.count) manifests: \(valid) valid, \(reports.count - valid) invalid"
    }
}

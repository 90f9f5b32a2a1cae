import ImageManifest
import ImageTableCore

/// `--format github`: one workflow command per diagnostic, which GitHub Actions turns into an
/// annotation on the offending line of the pull request, then the same status lines and plans
/// as the text output for the job log.
enum GitHubReport {
    static func render(_ reports: [ValidationReport]) -> String {
        var out = ""
        for report in reports {
            for d in report.diagnostics { out += DiagnosticLines.githubAnnotation(d) + "\n" }
            // The annotations above are the only lines that may read as workflow commands.
            out += PrintableText.uncommanded(TextReport.statusLine(report)) + "\n"
            if let manifest = report.plannedManifest { out += PrintableText.uncommanded(PlanTable.render(manifest)) }
        }
        if reports.count > 1 { out += PrintableText.uncommanded(TextReport.summaryLine(reports)) + "\n" }
        return out
    }
}

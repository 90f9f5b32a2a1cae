import Foundation
import ImageTableCore
import ImageBake
import ImageManifest

/// What `imagetable bake` prints: a summary for people, or one JSON document (fields in the
/// README, "imagetable bake").
enum BakeReport {
    struct Document: Encodable {
        let version = 1
        let manifest: String
        let ok: Bool
        let dryRun: Bool
        let seconds: Double
        let sources: Sources
        let tables: [TableSummary]
        let failures: [SourceFailure]
        let diagnostics: [JSONReport.DiagnosticEntry]
        let fatal: ImageTableError?
    }

    struct Sources: Encodable {
        let found: Int
        let decoded: Int
        let unchanged: Int
        let failed: Int
    }


    static func print(_ summary: BakeSummary, report: ValidationReport, manifestPath: String, format: BakeOutputFormat) {
        switch format {
        case .json:
            emit(Document(manifest: manifestPath, ok: summary.failed.isEmpty, dryRun: summary.dryRun, seconds: summary.seconds,
                          sources: Sources(found: summary.sourcesFound, decoded: summary.decoded, unchanged: summary.unchanged,
                                           failed: summary.failed.count),
                          tables: summary.tables, failures: summary.failed, diagnostics: entries(report), fatal: nil))
        case .text:
            for failure in summary.failed { StandardError.report(failure.error) }
            Swift.print(text(summary, manifestPath: manifestPath), terminator: "")
        }
    }

    static func text(_ s: BakeSummary, manifestPath: String) -> String {
        let verb = s.dryRun ? "would bake" : "baked"
        var out = "\(manifestPath): \(verb) \(s.sourcesFound) sources in \(String(format: "%.2f", s.seconds)) s: "
            + "\(s.decoded) decoded, \(s.unchanged) unchanged, \(s.failed.count) failed\n"
        let rows = s.tables.map { t in
            [t.path, "\(t.written)", "\(t.evicted)", "\(t.entries)/\(t.capacity)", t.reset ? (s.dryRun ? "would rebuild" : "rebuilt") : ""]
        }
        let header = ["table", s.dryRun ? "would write" : "written", s.dryRun ? "would evict" : "evicted", "entries", ""]
        let widths = (0..<5).map { i in ([header] + rows).map { $0[i].count }.max() ?? 0 }
        for row in [header] + rows {
            let cells = row.enumerated().map { i, cell in i == 0 ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                                               : String(repeating: " ", count: widths[i] - cell.count) + cell }
            out += "  " + cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
        }
        for t in s.tables where !t.notices.isEmpty {
            for notice in t.notices { out += "\(t.path): note: \(notice)\n" }
        }
        if s.stoppedEarly { out += "stopped at the first failure (--strict)\n" }
        return out
    }

    static func printInvalid(_ report: ValidationReport, format: BakeOutputFormat) {
        switch format {
        case .json:
            emit(failure(report, ImageTableError(.invalidManifest, "the manifest has errors", path: report.file)))
        case .text:
            Swift.print(TextReport.render([report]), terminator: "")
        }
    }

    static func printFatal(_ error: ImageTableError, report: ValidationReport, format: BakeOutputFormat) {
        switch format {
        case .json:
            emit(failure(report, error))
        case .text:
            StandardError.report(error)
        }
    }

    private static func entries(_ report: ValidationReport) -> [JSONReport.DiagnosticEntry] {
        report.diagnostics.map(JSONReport.DiagnosticEntry.init)
    }

    /// The document for a bake that stopped before it had a summary.
    private static func failure(_ report: ValidationReport, _ fatal: ImageTableError) -> Document {
        Document(manifest: report.file, ok: false, dryRun: false, seconds: 0, sources: Sources(found: 0, decoded: 0, unchanged: 0, failed: 0),
                 tables: [], failures: [], diagnostics: entries(report), fatal: fatal)
    }

    private static func emit(_ document: Document) {
        Swift.print(JSONOutput.encode(document), terminator: "")
    }
}

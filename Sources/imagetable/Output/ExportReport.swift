import Foundation
import ImageBake
import ImageManifest
import ImageTableCore

/// What `imagetable export` prints: a line per table for people, or one JSON document (fields
/// in docs/CLI.md, "export").
enum ExportReport {
    private struct Document: Encodable {
        let version = 1
        let ok: Bool
        let manifest: String
        let directory: String
        let sourceDateEpoch: UInt64?
        let tables: [ExportIndex.Table]
        let error: ImageTableError?
        /// The manifest's problems, as `validate --format json` gives them: why an invalid
        /// manifest was not exported, which `error` alone did not say.
        let diagnostics: [JSONReport.DiagnosticEntry]
    }

    /// Prints a finished export.
    static func print(_ summary: ExportSummary, manifest: String, report: ValidationReport, format: TableOutputFormat) {
        switch format {
        case .json:
            Swift.print(JSONOutput.encode(Document(ok: true, manifest: manifest, directory: summary.directory,
                                                   sourceDateEpoch: summary.index.sourceDateEpoch, tables: summary.index.tables,
                                                   error: nil, diagnostics: report.diagnostics.map(JSONReport.DiagnosticEntry.init))),
                        terminator: "")
        case .text:
            let tables = summary.index.tables
            let entries = tables.reduce(0) { $0 + $1.entries }
            var out = "\(PrintableText.escaped(summary.directory)): exported \(tables.count) table\(tables.count == 1 ? "" : "s"), "
                + "\(entries) entr\(entries == 1 ? "y" : "ies"), time \(summary.index.sourceDateEpoch)\n"
            let width = tables.map { TerminalWidth.columns($0.file) }.max() ?? 0
            for t in tables {
                out += "  " + TerminalWidth.padded(t.file, to: width)
                    + "  \(t.entries) entries  \(t.bytes) bytes  sha256 \(t.sha256)\n"
            }
            StandardOutput.write(out)
        }
    }

    /// Prints the JSON document of an export that failed.
    static func printFailure(_ error: ImageTableError, report: ValidationReport, directory: String) {
        Swift.print(JSONOutput.encode(Document(ok: false, manifest: report.file, directory: directory, sourceDateEpoch: nil, tables: [],
                                               error: error, diagnostics: report.diagnostics.map(JSONReport.DiagnosticEntry.init))),
                    terminator: "")
    }
}

import Foundation
import ImageBake
import ImageTableCore

/// What `imagetable merge` prints: a summary for people, or one JSON document (fields in
/// docs/CLI.md, "merge").
enum MergeReport {
    struct Document: Encodable {
        let version = 1
        let ok: Bool
        let output: String
        let inputs: [String]
        let shards: Int?
        let seconds: Double
        let bytes: Int
        let tables: [MergedTable]
        let warnings: [BakeWarning]
        let fatal: ImageTableError?
    }

    static func print(_ summary: MergeSummary, output: String, inputs: [String], format: TableOutputFormat) {
        switch format {
        case .json:
            Swift.print(JSONOutput.encode(Document(ok: summary.warnings.isEmpty, output: output, inputs: inputs, shards: summary.shards,
                                                   seconds: summary.seconds, bytes: summary.bytes, tables: summary.tables,
                                                   warnings: summary.warnings, fatal: nil)), terminator: "")
        case .text:
            for warning in summary.warnings { StandardError.print(warning.description) }
            StandardOutput.write(text(summary, output: output, inputs: inputs.count))
        }
    }

    static func text(_ s: MergeSummary, output: String, inputs: Int) -> String {
        let what = s.shards.map { "\($0) shard\($0 == 1 ? "" : "s")" } ?? "\(inputs) \(inputs == 1 ? "directory" : "directories")"
        let entries = s.tables.reduce(0) { $0 + $1.entries }
        let megabytes = String(format: "%.1f", Double(s.bytes) / 1_048_576)
        let out = "\(PrintableText.escaped(output)): merged \(what) in \(String(format: "%.2f", s.seconds)) s: "
            + "\(s.tables.count) \(s.tables.count == 1 ? "table" : "tables"), \(entries) entries, \(megabytes) MiB of pixels copied\n"
        let header = ["table", "entries", "left out", "duplicates", "skipped"]
        let rows = s.tables.map { t in
            [PrintableText.escaped(t.path), "\(t.entries)/\(t.capacity)", "\(t.leftOut)", "\(t.duplicates)", "\(t.skipped)"]
        }
        return out + TextTable.render(header: header, rows: rows)
    }

    static func printFatal(_ error: ImageTableError, output: String, inputs: [String], format: TableOutputFormat) {
        switch format {
        case .json:
            Swift.print(JSONOutput.encode(Document(ok: false, output: output, inputs: inputs, shards: nil, seconds: 0, bytes: 0, tables: [],
                                                   warnings: [], fatal: error)), terminator: "")
        case .text:
            StandardError.report(error)
        }
    }
}

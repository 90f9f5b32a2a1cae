import Foundation
import ImageManifest

/// `--format json`: one document for every manifest given; the fields are documented in
/// `docs/MANIFEST.md`, "JSON output". Keys are sorted so that the output is stable.
enum JSONReport {
    struct Document: Encodable {
        let version = 1
        let valid: Bool
        let errorCount: Int
        let warningCount: Int
        let totalMaxBytes: Int
        let manifests: [ManifestEntry]
    }

    struct ManifestEntry: Encodable {
        let file: String
        let valid: Bool
        let errorCount: Int
        let warningCount: Int
        let diagnostics: [DiagnosticEntry]
        let tables: [TableEntry]
        let totalMaxBytes: Int
    }

    struct DiagnosticEntry: Encodable {
        let severity: String
        let code: String
        let message: String
        let file: String
        let line: Int
        let column: Int
        let keyPath: String

        init(_ d: Diagnostic) {
            severity = d.severity.rawValue
            code = d.code.rawValue
            message = d.message
            file = d.file
            line = d.line
            column = d.column
            keyPath = d.keyPath
        }
    }

    struct TableEntry: Encodable {
        let format: String
        let family: String
        let scale: Int
        let file: String
        let pixelWidth: Int
        let pixelHeight: Int
        let style: String
        let bytesPerRow: Int
        let slotBytes: Int
        let maximumCount: Int
        let maxBytes: Int
    }

    static func render(_ reports: [ValidationReport]) -> String {
        let entries = reports.map { r in
            ManifestEntry(
                file: r.file, valid: r.isValid, errorCount: r.errorCount, warningCount: r.warningCount,
                diagnostics: r.diagnostics.map(DiagnosticEntry.init),
                tables: (r.manifest?.tables ?? []).map {
                    TableEntry(format: $0.format.name, family: $0.family, scale: $0.scale, file: $0.displayPath,
                               pixelWidth: $0.pixelWidth, pixelHeight: $0.pixelHeight, style: $0.style.rawValue,
                               bytesPerRow: $0.bytesPerRow, slotBytes: $0.slotBytes, maximumCount: $0.maximumCount,
                               maxBytes: $0.maxBytes)
                },
                totalMaxBytes: r.manifest?.totalMaxBytes ?? 0)
        }
        let document = Document(valid: entries.allSatisfy(\.valid), errorCount: entries.reduce(0) { $0 + $1.errorCount },
                                warningCount: entries.reduce(0) { $0 + $1.warningCount },
                                totalMaxBytes: entries.reduce(0) { $0 + $1.totalMaxBytes }, manifests: entries)
        return JSONOutput.encode(document)
    }
}

import Foundation
import ImageManifest
import ImageTableCore

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

        init(_ f: TableFormat, of manifest: Manifest) {
            let layout = Manifest.planLayout(of: f)
            format = f.name
            family = f.family
            scale = f.scale
            file = manifest.displayPath(of: f)
            pixelWidth = f.width
            pixelHeight = f.height
            style = f.style.rawValue
            bytesPerRow = layout?.bytesPerRow ?? 0
            slotBytes = layout?.slotStride ?? 0
            maximumCount = f.capacity
            maxBytes = layout?.maxFileBytes ?? 0
        }
    }

    static func render(_ reports: [ValidationReport]) -> String {
        let entries = reports.map { r in
            ManifestEntry(
                file: r.file, valid: r.isValid, errorCount: r.errorCount, warningCount: r.warningCount,
                diagnostics: r.diagnostics.map(DiagnosticEntry.init),
                tables: r.plannedManifest.map { m in m.formats.map { TableEntry($0, of: m) } } ?? [],
                totalMaxBytes: r.plannedManifest?.totalMaxBytes ?? 0)
        }
        let document = Document(valid: entries.allSatisfy(\.valid), errorCount: entries.reduce(0) { $0 + $1.errorCount },
                                warningCount: entries.reduce(0) { $0 + $1.warningCount },
                                totalMaxBytes: entries.filter(\.valid).reduce(0) { $0 + $1.totalMaxBytes }, manifests: entries)
        return JSONOutput.encode(document)
    }
}

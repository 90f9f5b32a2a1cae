import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// `docs/MANIFEST.md` is the reference a stranger follows: it must name every code, key, limit
/// and JSON field the code has, or the code has drifted from it.
@Suite struct DocsTests {
    private let doc = (try? String(contentsOfFile: Repository.manifestDoc, encoding: .utf8)) ?? ""

    /// A function, not `doc.contains`, so that a failure prints the phrase rather than the document.
    private func has(_ phrase: String) -> Bool { doc.contains(phrase) }

    /// `1234567` → `1,234,567`, as the document writes numbers.
    private func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        return digits.enumerated().map { i, d in (i > 0 && (digits.count - i) % 3 == 0 ? "," : "") + String(d) }.joined()
    }

    @Test func everyDiagnosticCodeIsDocumented() {
        for code in DiagnosticCode.allCases {
            #expect(has("| `\(code.rawValue)` |"), "\(code.rawValue)")
        }
        // Warnings are marked as such.
        for code in DiagnosticCode.allCases where code.defaultSeverity == .warning {
            #expect(has("| `\(code.rawValue)` | **warning**"), "\(code.rawValue)")
        }
    }

    @Test func everyKeyIsDocumented() {
        for key in ManifestReader.rootKeys + ManifestReader.familyKeys + FormatReader.keys {
            #expect(has("| `\(key)`"), "\(key)")
        }
    }

    @Test func limitsMatchTheCode() {
        #expect(has("1 MiB (\(grouped(ManifestLimits.maxFileBytes)) bytes)"))
        #expect(has("| \(ManifestLimits.maxDepth) | `too-deep`"))
        #expect(has("| \(grouped(ManifestLimits.maxNodes)) | `too-many-nodes`"))
        #expect(has("| \(grouped(ManifestLimits.maxScalarBytes)) bytes | `scalar-too-large`"))
        #expect(has("| \(ManifestLimits.maxDiagnostics), then"))
        #expect(has("| \(grouped(ManifestLimits.maxPixelDimension)) | `size-too-large`"))
        #expect(has("| \(grouped(ManifestLimits.maxCapacity)) | `maximum-count-out-of-range`"))
        #expect(has("| \(ManifestLimits.maxTableBytes >> 40) TiB | `table-too-large`"))
        #expect(has("| \(ManifestLimits.maxNameBytes) bytes | `invalid-name`"))
        #expect(has("| 1 … \(ManifestLimits.scales.upperBound), no repeats |"))
        #expect(has("page size of \(grouped(ManifestLimits.planPageSize)) bytes"))
    }

    @Test func everyJSONFieldIsDocumented() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        try dir.write("m.yaml", manifest(format: "size: 5x5\nstyle: 32BitBGRA\nmaximumCount: 1\ncrop: entropy\nfit: fill"))
        let result = try run(Products.imagetable, ["validate", "--format", "json", "m.yaml"], in: dir.path)
        var keys: Set<String> = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                keys.formUnion(object.keys)
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)))
        #expect(keys.count >= 25)
        // Fields appear as `key`, or within a path such as `manifests[].tables[]`.
        let undocumented = keys.filter { key in
            !["`\(key)`", "`\(key)[", ".\(key)`", ".\(key)["].contains { doc.contains($0) }
        }
        #expect(undocumented.isEmpty, "undocumented JSON fields: \(undocumented.sorted())")
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// One broken or hostile manifest of `Corpus/`, with the diagnostics its trailing comments expect:
///
/// ```
/// # expect: error unknown-style 9:16 families.users.formats.small.style
/// # schema: reject
/// ```
///
/// The key path is optional. `schema:` says whether the JSON Schema must also `reject` (or
/// `accept`) the file; files without it test rules the schema cannot express.
struct CorpusCase: Sendable, CustomTestStringConvertible {
    let path: String
    /// `severity code line:column [keyPath]`, as the comments write them.
    let expected: [String]
    let schemaVerdict: String?

    var name: String { URL(fileURLWithPath: path).lastPathComponent }
    var testDescription: String { name }

    static let all: [CorpusCase] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Repository.corpus)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { name in
            let path = Repository.corpus + "/" + name
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            let expected = lines.filter { $0.hasPrefix("# expect: ") }.map { String($0.dropFirst("# expect: ".count)) }
            let verdict = lines.first { $0.hasPrefix("# schema: ") }.map { String($0.dropFirst("# schema: ".count)) }
            return CorpusCase(path: path, expected: expected, schemaVerdict: verdict)
        }
    }()
}

/// The committed corpus: every file yields exactly the diagnostics it expects, within a second.
@Suite struct CorpusTests {
    @Test func corpusIsLargeEnough() {
        #expect(CorpusCase.all.count >= 30)
        #expect(CorpusCase.all.allSatisfy { !$0.expected.isEmpty })
    }

    @Test(arguments: CorpusCase.all)
    func yieldsExactlyTheExpectedDiagnostics(_ corpusCase: CorpusCase) {
        let clock = ContinuousClock()
        var report: ValidationReport?
        let elapsed = clock.measure { report = ManifestValidator().validate(fileAt: corpusCase.path) }
        guard let report else { return }
        // A guard against a hostile manifest that hangs the validator, not a measure of speed.
        #expect(elapsed < .seconds(15))
        let rendered = report.diagnostics.map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.line):\($0.column) \($0.keyPath)" }
        let matches = rendered.count == corpusCase.expected.count
            && zip(rendered, corpusCase.expected).allSatisfy { actual, expected in
                // An expectation without a key path matches any key path.
                expected.split(separator: " ").count > 3 ? actual == expected : actual.hasPrefix(expected + " ")
            }
        #expect(matches, "expected \(corpusCase.expected), got:\n\(report.diagnostics.map(\.description).joined(separator: "\n"))")
        #expect(report.isValid == !corpusCase.expected.contains { $0.hasPrefix("error ") })
    }
}

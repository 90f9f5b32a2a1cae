import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Hostile inputs too big, too deep or too binary to commit: each is built here, and each must
/// give one exact diagnostic within a second, never a hang, a crash or a huge allocation.
struct HostileCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let bytes: @Sendable () -> [UInt8]
    /// `line:column code` of the first diagnostic.
    let expected: String
}

private func text(_ s: String) -> [UInt8] { Array(s.utf8) }

private let validBody = "version: 1\noutput: tables\nfamilies:\n  users:\n    sources: .\n    formats:\n      small: {size: 5x5, style: 32BitBGRA, maximumCount: 1}\n"

@Suite struct GeneratedHostileTests {
    static let cases: [HostileCase] = [
        HostileCase(testDescription: "zero bytes", bytes: { [] }, expected: "1:1 empty-file"),
        HostileCase(testDescription: "only whitespace", bytes: { text("  \n\n\t\r\n") }, expected: "1:1 empty-file"),
        HostileCase(testDescription: "only a byte-order mark", bytes: { [0xEF, 0xBB, 0xBF, 0x0A] }, expected: "1:1 empty-file"),
        HostileCase(testDescription: "explicit empty document", bytes: { text("---\n...\n") }, expected: "1:1 empty-file"),
        HostileCase(testDescription: "Latin-1 byte on line 3", bytes: { text("version: 1\noutput: t\nfamilies: caf") + [0xE9] + text("\n") },
                    expected: "3:14 invalid-utf8"),
        HostileCase(testDescription: "overlong UTF-8 encoding of '/'", bytes: { text("output: a") + [0xC0, 0xAF] }, expected: "1:10 invalid-utf8"),
        HostileCase(testDescription: "UTF-8 surrogate", bytes: { text("a: é") + [0xED, 0xA0, 0x80] }, expected: "1:5 invalid-utf8"),
        HostileCase(testDescription: "truncated sequence at the end", bytes: { text("a: b\n") + [0xE2, 0x82] }, expected: "2:1 invalid-utf8"),
        HostileCase(testDescription: "Latin-1 byte after a byte-order mark", bytes: { [0xEF, 0xBB, 0xBF] + text("a: caf") + [0xE9] },
                    expected: "1:7 invalid-utf8"),
        HostileCase(testDescription: "bad byte after a NEL, a line break for libyaml", bytes: { text("a: b") + [0xC2, 0x85] + text("c") + [0xFF] },
                    expected: "2:2 invalid-utf8"),
        HostileCase(testDescription: "UTF-16 with a byte-order mark", bytes: { [0xFF, 0xFE] + Array("v\0e\0".utf8) }, expected: "1:1 invalid-utf8"),
        HostileCase(testDescription: "UTF-16LE without a byte-order mark", bytes: { Array("v\0e\0r\0".utf8) }, expected: "1:1 invalid-utf8"),
        HostileCase(testDescription: "UTF-16BE without a byte-order mark", bytes: { Array("\0v\0e\0r".utf8) }, expected: "1:1 invalid-utf8"),
        HostileCase(testDescription: "UTF-32BE without a byte-order mark", bytes: { Array("\0\0\0v\0\0\0e".utf8) }, expected: "1:1 invalid-utf8"),
        HostileCase(testDescription: "NUL byte", bytes: { text("version: 1\noutput: a\0b\n") }, expected: "2:10 yaml-syntax"),
        HostileCase(testDescription: "one byte over 1 MiB of comment", bytes: { text("#" + String(repeating: "x", count: (1 << 20) - 1) + "\n") },
                    expected: "1:1 file-too-large"),
        HostileCase(testDescription: "a million opening brackets (the composer's depth limit, at once)",
                    bytes: { text(String(repeating: "[", count: 1_000_000)) }, expected: "1:33 too-deep"),
        HostileCase(testDescription: "500 nested flow sequences",
                    bytes: { text(String(repeating: "[", count: 500) + String(repeating: "]", count: 500)) }, expected: "1:33 too-deep"),
        HostileCase(testDescription: "block mappings 40 deep",
                    bytes: { text((0..<40).map { String(repeating: " ", count: $0) + "a:\n" }.joined()) }, expected: "33:33 too-deep"),
        HostileCase(testDescription: "nesting hidden behind an alias",
                    bytes: { text("x-a: &a " + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "\n"
                                  + "x-b: " + String(repeating: "[", count: 12) + "*a" + String(repeating: "]", count: 12) + "\n") },
                    expected: "2:18 too-deep"),
        HostileCase(testDescription: "60,000 nodes without aliases",
                    bytes: { text("[" + Array(repeating: "1", count: 60_000).joined(separator: ",") + "]") }, expected: "1:100000 too-many-nodes"),
        HostileCase(testDescription: "quadratic alias fan-out",
                    bytes: { text("x-a: &a [" + Array(repeating: "0", count: 300).joined(separator: ",") + "]\nx-b: ["
                                  + Array(repeating: "*a", count: 300).joined(separator: ",") + "]\n") }, expected: "2:502 alias-expansion"),
        HostileCase(testDescription: "a 900 KB scalar", bytes: { text("output: \"" + String(repeating: "x", count: 900_000) + "\"\n") },
                    expected: "1:1 missing-key"),
        HostileCase(testDescription: "thousands of unknown keys", bytes: { text((0..<5000).map { "k\($0): 1\n" }.joined()) },
                    expected: "1:1 unknown-key"),
        // The syntax error's placement and the lax checks stay linear in the text.
        HostileCase(testDescription: "an unclosed bracket around 40,000 quoted values on one line",
                    bytes: { text("x: [" + String(repeating: "\"a\", ", count: 40_000) + "@\n") }, expected: "1:4 yaml-syntax"),
        HostileCase(testDescription: "30 unclosed brackets", bytes: { text("x: " + String(repeating: "[", count: 30) + "a, @\n") },
                    expected: "1:33 yaml-syntax"),
        HostileCase(testDescription: "20,000 documents, each with a directive",
                    bytes: { text(String(repeating: "%YAML 1.2\n---\na\n...\n", count: 20_000)) }, expected: "3:1 wrong-type"),
        HostileCase(testDescription: "thousands of unknown keys on one line",
                    bytes: { text("{" + (0..<5000).map { "k\($0): 1" }.joined(separator: ", ") + "}\n") }, expected: "1:2 unknown-key"),
    ]

    @Test(arguments: cases)
    func isRejectedQuickly(_ hostile: HostileCase) {
        let bytes = hostile.bytes()
        let clock = ContinuousClock()
        var report: ValidationReport?
        let elapsed = clock.measure { report = ManifestValidator().validate(contents: bytes, file: "/nonexistent/hostile.yaml") }
        // A guard against blow-ups (an alias bomb, a quadratic pass over 60,000 nodes), not a
        // measure of speed: these take milliseconds, and a bound of 1 s failed once at 1.004 s
        // on a machine busy with other work.
        #expect(elapsed < .seconds(15), "took \(elapsed)")
        #expect(report.map(summary)?.first == hostile.expected, "\(report?.diagnostics.prefix(3).map(\.description) ?? [])")
        #expect(report?.isValid == false)
    }

    @Test func hugeScalarIsNamedWithItsSize() throws {
        let report = try check(validBody + "x-big: \"" + String(repeating: "y", count: 5000) + "\"\n")
        #expect(summary(report) == ["8:8 scalar-too-large"])
        #expect(report.diagnostics.first?.message == "this value is 5000 bytes long; the limit is 4096")
    }

    @Test func diagnosticsStopAtTheLimit() {
        let report = ManifestValidator().validate(contents: text((0..<5000).map { "k\($0): 1\n" }.joined()), file: "/x/m.yaml")
        #expect(report.diagnostics.count == ManifestLimits.maxDiagnostics + 1)
        #expect(report.diagnostics.last?.code == .tooManyProblems)
    }

    @Test func byteOrderMarkDoesNotShiftColumns() {
        let report = ManifestValidator().validate(contents: [0xEF, 0xBB, 0xBF] + text("versoin: 1\n"), file: "/x/m.yaml")
        #expect(summary(report).first == "1:1 unknown-key")
    }

    @Test func crlfLineBreaksCountOnce() {
        let report = ManifestValidator().validate(contents: text("version: 1\r\noutput: t\r\nstyle: x\r\n"), file: "/x/m.yaml")
        #expect(summary(report).contains("3:1 unknown-key"))
    }

    @Test func aFileOverTheLimitIsNotReadWhole() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("big.yaml", [UInt8](repeating: 0x23, count: 8 << 20))
        let report = ManifestValidator().validate(fileAt: file)
        #expect(summary(report) == ["1:1 file-too-large"])
    }

    @Test func unreadableFiles() throws {
        let dir = try TemporaryDirectory()
        #expect(summary(ManifestValidator().validate(fileAt: dir.path + "/missing.yaml")) == ["1:1 file-unreadable"])
        #expect(summary(ManifestValidator().validate(fileAt: dir.path)) == ["1:1 file-unreadable"])
    }

    /// Yams recurses about 1.6 KB of stack per nesting level; this validator must not recurse
    /// with the input at all, so every deep case runs on a thread with a 256 KiB stack, smaller
    /// than any Swift concurrency thread. A regression crashes the test process.
    @Test func deepInputsNeedNoLargeStack() {
        let deep = Self.cases.filter { $0.expected.hasSuffix("too-deep") || $0.expected.hasSuffix("alias-expansion") }
        let results = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            results.codes = deep.map { summary(ManifestValidator().validate(contents: $0.bytes(), file: "/x/deep.yaml")).first ?? "" }
            done.signal()
        }
        thread.stackSize = 256 << 10
        thread.start()
        done.wait()
        #expect(deep.count >= 5)
        #expect(results.codes == deep.map(\.expected))
    }
}

private final class ResultBox: @unchecked Sendable {
    var codes: [String] = []
}

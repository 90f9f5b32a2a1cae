import Foundation
import TestSupport
import Testing

/// File names reach the terminal escaped: a source whose name holds a terminal title sequence, a
/// screen clear and a line break that forges a second error line fails to decode, and what the
/// bake prints about it has none of those bytes. JSON carries the name unchanged.
struct TerminalEscapeTests {
    static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[2J\nx.jpg: error: forged [decode-failed]\ny.jpg"

    @Test func aHostileSourceNameIsEscapedInBakeOutput() throws {
        let project = try BakeProject(formats: "      grid:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 10\n")
        try project.add("good.jpg", from: Corpus.photo("Landscape_1"))
        // A JPEG signature, then garbage: an image by its first bytes that fails to decode.
        project.add(Self.hostile, bytes: [0xFF, 0xD8, 0xFF, 0xE0] + Array("garbage, not a JPEG".utf8))
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(bake.status == 3)
        let bytes = Array(bake.stderr.utf8) + Array(bake.output)
        #expect(!bytes.contains(0x1B) && !bytes.contains(0x07), "raw escape or bell reached the terminal: \(bake.stderr)")
        let lines = bake.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "one failure, one line: \(lines)")
        #expect(!lines.contains { $0.hasPrefix("x.jpg") })
        let escaped = "\\u{1B}]0;pwned\\u{7}\\u{1B}[2J\\nx.jpg: error: forged [decode-failed]\\ny.jpg"
        #expect(lines.first?.hasPrefix("\(project.sources)/\(escaped): error: ") == true, "\(lines)")

        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json", "--rehash"])
        let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let failure = try #require((document["failures"] as? [[String: Any]])?.first)
        #expect(failure["key"] as? String == Self.hostile && failure["path"] as? String == project.sources + "/" + Self.hostile)
    }
}

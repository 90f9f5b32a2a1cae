import Foundation
import TestSupport
import Testing

/// The line a diagnostic quotes: whole up to 160 characters, else 160 of them around the
/// column, with the caret under it either way.
struct ExcerptTests {
    /// The excerpt and caret lines `validate` prints for a format line with an unknown key
    /// `bogus` after an `x-` key of `padding` letters.
    private func excerpt(padding: Int) throws -> (line: String, caret: String) {
        let scratch = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("src"), withIntermediateDirectories: true)
        let manifest = scratch.file("m.yaml")
        try ("version: 1\noutput: tables\nfamilies:\n  pics:\n    sources: src\n    formats:\n"
            + "      thumb: {size: 50x50, style: 32BitBGRA, maximumCount: 2, x-\(String(repeating: "a", count: padding)): 1, bogus: 2}\n")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try imagetable("validate", manifest)
        #expect(result.status == 1)
        let lines = (result.stdout + result.stderr).split(separator: "\n").map(String.init)
        let line = try #require(lines.first { $0.hasPrefix("    7 | ") }, "\(result.stdout)")
        let caret = try #require(lines.first { $0.hasSuffix("^") }, "\(result.stdout)")
        return (String(line.dropFirst("    7 | ".count)), String(caret.dropFirst("      | ".count)))
    }

    /// A 98-character line whose column is 90 is shown whole (a cut at 80 characters on each
    /// side of the column had cut its start).
    @Test func aLineOf160CharactersOrFewerIsShownWhole() throws {
        let (line, caret) = try excerpt(padding: 20)
        #expect(line.count == 98 && !line.contains("…"), "\(line)")
        #expect(line.dropFirst(caret.count - 1).hasPrefix("bogus"), "\(line)\n\(caret)")
    }

    /// A longer line keeps 160 characters, most of them before a column near its end, each cut
    /// marked, and the caret under the key.
    @Test func aLongerLineKeeps160AroundTheColumn() throws {
        let (line, caret) = try excerpt(padding: 300)
        #expect(line.count == 160 && line.hasPrefix("…") && !line.hasSuffix("…"), "\(line)")
        #expect(line.dropFirst(caret.count - 1).hasPrefix("bogus"), "\(line)\n\(caret)")
    }
}

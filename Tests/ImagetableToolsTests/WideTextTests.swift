import Foundation
import TestSupport
import Testing

/// Carets and table columns line up on a terminal when the text before them is Chinese,
/// Japanese or Korean, whose characters take two columns each (they were placed by counting
/// characters, two columns short for every such character).
struct WideTextTests {
    /// Columns as a terminal shows this test's text: kana and CJK ideographs take two.
    static func columns(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + ((0x3040...0x30FF).contains($1.value) || (0x4E00...0x9FFF).contains($1.value) ? 2 : 1) }
    }

    @Test func theCaretStandsUnderTheColumnAfterWideCharacters() throws {
        let scratch = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("写真"), withIntermediateDirectories: true)
        let manifest = scratch.file("m.yaml")
        try ("version: 1\noutput: tables\nfamilies:\n"
            + "  photos: {sources: 写真, formats: {t: {size: 10x10, style: 32BitBGRA, maximumCount: 0}}}\n")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let result = try imagetable("validate", manifest)
        #expect(result.status == 1)
        let lines = (result.stdout + result.stderr).split(separator: "\n").map(String.init)
        let excerpt = try #require(lines.first { $0.hasPrefix("    4 | ") }, "\(result.stdout)")
        let caret = try #require(lines.first { $0.hasSuffix("^") && $0.hasPrefix("      | ") }, "\(result.stdout)")
        // The caret's column is the column of the value `0` that maximumCount is given.
        let value = try #require(excerpt.range(of: "maximumCount: 0")).upperBound
        #expect(Self.columns(excerpt[..<value]) - 1 == Self.columns(caret) - 1, "\(excerpt)\n\(caret)")
    }

    /// Bakes one photo into an 8×8 table in the directory `output` (as the manifest writes it),
    /// from a scratch directory, and returns the run and the lines of the summary's table.
    static func bakeSummary(output: String) throws -> (result: ProcessResult, table: [String]) {
        let scratch = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: scratch.file("src"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_1"), toPath: scratch.file("src/a.jpg"))
        try ("version: 1\noutput: \(output)\nfamilies:\n  photos:\n    sources: src\n    formats:\n"
            + "      t:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 4\n")
            .write(toFile: scratch.file("m.yaml"), atomically: true, encoding: .utf8)
        let result = try run(Products.imagetable, ["bake", "m.yaml", "--no-progress"], in: scratch.path)
        return (result, result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }.map(String.init))
    }

    @Test func theBakeSummarysColumnsLineUpUnderAWideOutputDirectory() throws {
        let (result, table) = try Self.bakeSummary(output: "出力された表")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(table.count == 2, "\(result.stdout)")
        // Every column ends where its header does: `written` right-aligned over `1`.
        let header = try #require(table.first), row = try #require(table.last)
        let written = try #require(header.range(of: "written")).upperBound
        let one = try #require(row.range(of: "  1 ")).lowerBound
        #expect(Self.columns(header[..<written]) == Self.columns(row[..<one]) + 3, "\(header)\n\(row)")
    }

    /// A table path that begins a line with `::` (an output directory so named) gets `./`, so no
    /// CI runner reads it as a command: the columns after it line up, where the `./` had been
    /// added after the widths were measured.
    @Test func theBakeSummarysColumnsLineUpAfterAGuardedPath() throws {
        let (result, table) = try Self.bakeSummary(output: "'::error::x'")
        #expect(result.status == 0, "\(result.stderr)")
        let header = try #require(table.first), row = try #require(table.last)
        #expect(row.hasPrefix("  ./::error::x/t.imagetable"), "\(result.stdout)")
        let written = try #require(header.range(of: "written")).upperBound
        let one = try #require(row.range(of: "  1 ")).lowerBound
        #expect(Self.columns(header[..<written]) == Self.columns(row[..<one]) + 3, "\(header)\n\(row)")
    }

    /// `inspect`'s entry columns line up after a key in Japanese: the column after the key starts
    /// at one terminal column in every row (it was placed by counting characters).
    @Test func inspectsColumnsLineUpAfterAWideKey() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["写真.jpg", "photo-long.jpg"])
        let result = try imagetable("inspect", table.path)
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").filter { $0.contains(".jpg") || $0.contains("recency") }
        #expect(rows.count == 3, "\(result.stdout)")
        // The recency column is right-aligned: where it ends, in columns, is one place.
        let ends = rows.map { row -> Int in
            if let header = row.range(of: "recency") { return Self.columns(row[..<header.upperBound]) }
            let after = row.range(of: row.contains("写真") ? "写真.jpg" : "photo-long.jpg")!.upperBound
            let recencyEnd = row[after...].firstIndex { $0 != " " }.flatMap { start in row[start...].firstIndex(of: " ") } ?? row.endIndex
            return Self.columns(row[..<recencyEnd])
        }
        #expect(Set(ends).count == 1, "\(ends)\n\(result.stdout)")
    }

    /// A key holding `##[` (a CI runner's older command marker) is written `#\u{23}[`, five
    /// columns wider: the columns after it line up, where the row was padded before it was
    /// written out.
    @Test func inspectsColumnsLineUpAfterACommandMarker() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["a##[b.jpg", "photo-long.jpg"])
        let result = try imagetable("inspect", table.path)
        #expect(result.status == 0 && result.stdout.contains("a#\\u{23}[b.jpg"), "\(result.stdout)")
        let rows = result.stdout.split(separator: "\n").filter { $0.contains(".jpg") || $0.contains("recency") }
        // Where the written column (after the right-aligned recency) starts is one place.
        let starts = rows.map { row in row.range(of: row.contains("recency") ? "written" : "20")!.lowerBound.utf16Offset(in: row) }
        #expect(rows.count == 3 && Set(starts).count == 1, "\(starts)\n\(result.stdout)")
    }
}

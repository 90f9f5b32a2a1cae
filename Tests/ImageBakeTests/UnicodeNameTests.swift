import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// Source names that differ only in their Unicode normalization: `café.jpg` spelt with U+00E9
/// (NFC, as most systems write it) and with `e` and U+0301 (NFD, as macOS's HFS+ wrote it). A
/// table tells entries apart by their keys' bytes; Swift's strings compare them as equal. Both
/// files used to be baked, each taken for the other's entry, so every bake decoded them again
/// and a re-bake never converged; a file renamed from one form to the other was never baked
/// under its new name.
@Suite struct UnicodeNameTests {
    static let nfc = "caf\u{E9}.jpg"
    static let nfd = "cafe\u{301}.jpg"

    /// The keys of the project's table, as their bytes.
    static func keys(_ project: BakeProject) throws -> [[UInt8]] {
        try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map { Array($0.key.utf8) }.sorted {
            $0.lexicographicallyPrecedes($1)
        }
    }

    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 10\n")
        try project.add("b.jpg", from: Corpus.photo("Landscape_3"))
        return project
    }

    @Test func twoFilesNamedAlikeBakeOnceAndReportTheOther() throws {
        #expect(Self.nfc == Self.nfd && Array(Self.nfc.utf8) != Array(Self.nfd.utf8), "the premise: equal strings, other bytes")
        let project = try Self.project()
        try project.add(Self.nfc, from: Corpus.photo("Landscape_1"))
        try project.add(Self.nfd, from: Corpus.photo("Landscape_2"))
        let first = try project.bake()
        #expect(first.decoded == 2)
        #expect(first.failed.count == 1)
        let failure = try #require(first.failed.first)
        #expect(failure.error.code == .ambiguousName)
        #expect(Array(failure.key.utf8) == Array(Self.nfd.utf8), "the NFC name is the one kept")
        #expect(failure.error.message.contains("U+0301 here, U+00E9 in \(project.sources)/\(Self.nfc)"), "\(failure.error.message)")
        #expect(first.keptPrevious == 0)
        #expect(try Self.keys(project) == [Array("b.jpg".utf8), Array(Self.nfc.utf8)])
        // The second bake has nothing to do: it used to decode both again, every time.
        let second = try project.bake()
        #expect(second.decoded == 0 && second.unchanged == 2 && second.failed.map(\.error.code) == [.ambiguousName])
        #expect(second.tables.map(\.written) == [0] && second.tables.map(\.pruned) == [0])
        // `--list` lists both files, the second failed: it dropped it, its key being equal to
        // the first's as Swift compares strings.
        let dry = try project.bake { $0.dryRun = true }
        let listed = (dry.plan?.listing(skipping: dry.skipped, failing: dry.failed) ?? []).map { "\(Array($0.key.utf8)) \($0.failure ?? "-")" }
        #expect(listed == ["\(Array("b.jpg".utf8)) -", "\(Array(Self.nfc.utf8)) -", "\(Array(Self.nfd.utf8)) ambiguous-name"], "\(listed)")
    }

    @Test func aFileRenamedToTheOtherFormIsBakedUnderItsNewName() throws {
        let project = try Self.project()
        try project.add(Self.nfd, from: Corpus.photo("Landscape_1"))
        #expect(try project.bake().decoded == 2)
        try FileManager.default.moveItem(atPath: project.sources + "/" + Self.nfd, toPath: project.sources + "/" + Self.nfc)
        // The table's NFD entry is no entry of the NFC file: it is removed, without --prune, and
        // the file baked under the name it has now, which the one before it kept for ever.
        let renamed = try project.bake()
        #expect(renamed.decoded == 1 && renamed.failed.isEmpty)
        #expect(renamed.tables.map(\.written) == [1] && renamed.tables.map(\.pruned) == [1])
        #expect(try Self.keys(project) == [Array("b.jpg".utf8), Array(Self.nfc.utf8)])
        let again = try project.bake()
        #expect(again.decoded == 0 && again.unchanged == 2)
        #expect(TableVerifier.verify(path: project.tables + "/thumb.imagetable").isValid)
    }

    /// A table baked from the NFD file alone, then the NFC file added beside it: the scan keeps
    /// the NFC file, and the table's NFD entry, an alias of its key, goes.
    @Test func anEntryOfTheOtherFormIsRemovedOnce() throws {
        let project = try Self.project()
        try project.add(Self.nfd, from: Corpus.photo("Landscape_1"))
        _ = try project.bake()
        try project.add(Self.nfc, from: Corpus.photo("Landscape_2"))
        let plan = try project.bake { $0.dryRun = true }
        #expect(plan.tables.map(\.pruned) == [1])
        let baked = try project.bake()
        #expect(baked.decoded == 1 && baked.failed.map(\.error.code) == [.ambiguousName])
        #expect(baked.tables.map(\.pruned) == [1] && baked.tables.map(\.entries) == [2])
        #expect(try Self.keys(project) == [Array("b.jpg".utf8), Array(Self.nfc.utf8)])
        let again = try project.bake()
        #expect(again.decoded == 0 && again.tables.map(\.pruned) == [0] && again.tables.map(\.written) == [0])
    }

    /// Sharded, the two names are in one shard (the shard hash takes the key in NFC), whose scan
    /// keeps one of them: the merge of the shards holds what one bake of them all does. Hashed as
    /// they were, the names fell in shards 3 and 1 of 4, both were baked, and the merge kept one.
    @Test func shardsKeepTheSameOneAsAWholeBake() throws {
        let project = try Self.project()
        try project.add(Self.nfc, from: Corpus.photo("Landscape_1"))
        try project.add(Self.nfd, from: Corpus.photo("Landscape_2"))
        var outputs: [String] = []
        for k in 0..<4 {
            let out = project.root + "/shard-\(k)"
            let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--shard", "\(k)/4", "--output", out, "--no-progress"])
            let ambiguous = bake.stderr.contains("[ambiguous-name]")
            #expect(ambiguous == (k == KeyShard.shard(of: Self.nfc, count: 4)), "shard \(k): \(bake.stderr)")
            outputs.append(out)
        }
        let merged = project.root + "/merged"
        #expect(try run(Products.imagetable, ["merge", merged] + outputs).status == 0)
        let whole = try project.bake()
        #expect(whole.failed.map(\.error.code) == [.ambiguousName])
        let keys = { (path: String) in
            try ImageTableReader(path: path).entries().map { Array($0.key.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        #expect(try keys(merged + "/thumb.imagetable") == keys(project.tables + "/thumb.imagetable"))
        #expect(try keys(merged + "/thumb.imagetable") == [Array("b.jpg".utf8), Array(Self.nfc.utf8)])
    }

    /// The name kept is the one in NFC whatever the order the directory lists them in, here for
    /// a Hangul syllable written whole (U+AC01) and as a syllable and a final consonant (U+AC00
    /// U+11A8), which Foundation's direct composition took for NFC on Linux: the first name
    /// listed was kept, and another file system's order would have kept the other.
    @Test func theNameInNFCIsKeptForHangulToo() throws {
        #expect(KeyNormalization.nfc("\u{AC00}\u{11A8}") == "\u{AC01}" && KeyNormalization.isNFC("\u{AC01}.jpg"))
        #expect(!KeyNormalization.isNFC("\u{AC00}\u{11A8}.jpg") && !KeyNormalization.isNFC(Self.nfd) && KeyNormalization.isNFC(Self.nfc))
        // Every code point below U+0300, alone and before each of a few: its own NFC, as the
        // shortcut that skips Foundation for such keys assumes.
        let below = (0x20..<0x300).compactMap(Unicode.Scalar.init).map { String(Character($0)) }
        for text in below + below.map({ $0 + "e\u{E9}" }) + below.map({ "A" + $0 }) {
            #expect(text.decomposedStringWithCanonicalMapping.precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(text.unicodeScalars),
                    "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        let project = try Self.project()
        try project.add("\u{AC00}\u{11A8}.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("\u{AC01}.jpg", from: Corpus.photo("Landscape_2"))
        let summary = try project.bake()
        #expect(summary.failed.map { Array($0.key.unicodeScalars) } == [Array("\u{AC00}\u{11A8}.jpg".unicodeScalars)])
        #expect(try Self.keys(project) == [Array("b.jpg".utf8), Array("\u{AC01}.jpg".utf8)])
    }
}

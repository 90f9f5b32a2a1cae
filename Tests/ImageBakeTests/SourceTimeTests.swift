import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Entries record when their source was last modified, so that `imagetable merge` can rank
/// entries from several shards by the rule a bake ranks sources by.
@Suite struct SourceTimeTests {
    @Test func entriesRecordTheirSourcesModificationTime() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 8BitGrayscale\n        maximumCount: 8\n")
        for (i, tile) in PhotoTiles.first(3).enumerated() { try project.add("t\(i).jpg", from: tile) }
        project.setModified("t1.jpg", secondsAgo: 86_400)
        _ = try project.bake()
        let reader = try ImageTableReader(path: project.tables + "/thumb.imagetable")
        for i in 0..<3 {
            let stat = try #require(FileStat(path: project.sources + "/t\(i).jpg"))
            #expect(reader.entry(forKey: "t\(i).jpg")?.sourceModifiedNs == stat.modifiedNs, "t\(i).jpg")
        }
    }

    /// A source touched without changing is not decoded again, but its entries record its new
    /// time (a dry run changes nothing); every other field, and every other entry, stays.
    @Test func aTouchedSourcesEntriesRecordItsNewTime() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 8BitGrayscale\n        maximumCount: 8\n"
                                      + "      bgra:\n        size: 12x12\n        style: 32BitBGRA\n        maximumCount: 8\n")
        for (i, tile) in PhotoTiles.first(3).enumerated() { try project.add("t\(i).jpg", from: tile) }
        _ = try project.bake()
        let names = ["thumb.imagetable", "bgra.imagetable"]
        func entries(_ name: String) throws -> [String: EntryInfo] {
            Dictionary(uniqueKeysWithValues: try ImageTableReader(path: project.tables + "/" + name).entries().map { ($0.key, $0) })
        }
        let before = try names.map(entries)
        // Set to the nanosecond, not left to the clock's resolution: an older time is a move too.
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789), timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789)]
        #expect(utimensat(AT_FDCWD, project.sources + "/t1.jpg", &times, 0) == 0)
        let touched: Int64 = 1_700_000_000_123_456_789
        #expect(FileStat(path: project.sources + "/t1.jpg")?.modifiedNs == touched)

        _ = try project.bake { $0.dryRun = true }
        #expect(try names.map(entries) == before, "a dry run writes nothing")
        let summary = try project.bake()
        #expect(summary.decoded == 0 && summary.unchanged == 3)
        for (name, old) in zip(names, before) {
            let new = try entries(name)
            #expect(new.keys.sorted() == old.keys.sorted())
            for (key, entry) in old where key != "t1.jpg" { #expect(new[key] == entry, "\(name): \(key)") }
            let was = try #require(old["t1.jpg"]), now = try #require(new["t1.jpg"])
            #expect(now.sourceModifiedNs == touched && was.sourceModifiedNs != touched, "\(name)")
            #expect(now.sourceUUID == was.sourceUUID && now.slot == was.slot && now.pixelChecksum == was.pixelChecksum
                    && now.contentRect == was.contentRect && now.writtenAt == was.writtenAt && now.recency == was.recency, "\(name)")
            #expect(TableVerifier.verify(path: project.tables + "/" + name).isValid)
        }
        // Settled: the next bake finds the time it recorded, and changes nothing.
        let settled = try names.map(entries)
        #expect(try project.bake().decoded == 0)
        #expect(try names.map(entries) == settled)
    }

    /// An entry kept while its source is gone (no `--prune`) records no time, so a merge ranks
    /// it after every present source; the source back with the same bytes gets its time again,
    /// without a decode.
    @Test func anEntryWhoseSourceIsGoneRecordsNoTimeUntilItComesBack() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 8BitGrayscale\n        maximumCount: 8\n")
        for (i, tile) in PhotoTiles.first(3).enumerated() { try project.add("t\(i).jpg", from: tile) }
        _ = try project.bake()
        let path = project.tables + "/thumb.imagetable"
        let before = try #require(try ImageTableReader(path: path).entry(forKey: "t1.jpg"))
        #expect(before.sourceModifiedNs != 0)
        let aside = project.root + "/t1.jpg"
        try FileManager.default.moveItem(atPath: project.sources + "/t1.jpg", toPath: aside)
        let gone = try project.bake()
        #expect(gone.decoded == 0 && gone.removed == 1, "\(gone)")
        let kept = try #require(try ImageTableReader(path: path).entry(forKey: "t1.jpg"), "no --prune: the entry stays")
        #expect(kept.sourceModifiedNs == 0 && kept.sourceUUID == before.sourceUUID && kept.pixelChecksum == before.pixelChecksum)
        #expect(try ImageTableReader(path: path).entry(forKey: "t0.jpg")?.sourceModifiedNs != 0, "the others keep theirs")
        #expect(TableVerifier.verify(path: path).isValid)

        try FileManager.default.moveItem(atPath: aside, toPath: project.sources + "/t1.jpg")
        var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 5), timespec(tv_sec: 1_600_000_000, tv_nsec: 5)]
        #expect(utimensat(AT_FDCWD, project.sources + "/t1.jpg", &times, 0) == 0)
        let back = try project.bake()
        #expect(back.decoded == 0, "the same bytes: nothing to decode")
        #expect(try ImageTableReader(path: path).entry(forKey: "t1.jpg")?.sourceModifiedNs == 1_600_000_000_000_000_005)
    }
}

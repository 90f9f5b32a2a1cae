import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

struct EvictionTests {
    @Test func fullTableReplacesTheLeastRecentlyUsedEntry() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 3))
        for key in ["a", "b", "c"] { try put(table, key) }
        // Reading "a" makes "b" the least recently used.
        #expect(try table.withImage(forKey: "a") { _ in true } == true)
        #expect(try put(table, "d").evictedKey == "b")
        #expect(try put(table, "e").evictedKey == "c")
        #expect(try put(table, "f").evictedKey == "a")
        #expect(Set(table.entries().map(\.key)) == ["d", "e", "f"])
    }

    @Test func touchCountsAsUseOnlyForCurrentEntries() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 2))
        let source = UUID()
        try put(table, "a", source: source)
        try put(table, "b")
        #expect(!table.touch(key: "a", sourceUUID: UUID()) && !table.touch(key: "zzz"))
        #expect(try put(table, "c").evictedKey == "a", "a stale touch is no use")
        try put(table, "a", source: source)
        #expect(table.touch(key: "c", sourceUUID: nil))
        #expect(try put(table, "d").evictedKey == "a")
    }

    @Test func aWriteThatMayNotEvictFindsTheTableFull() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 2))
        try put(table, "a")
        let error = #expect(throws: ImageTableError.self) {
            _ = try table.reserve(key: "b", sourceUUID: UUID(), evicting: .none)
            _ = try table.reserve(key: "c", sourceUUID: UUID(), evicting: .none)
        }
        #expect(error?.code == .full && table.contains(key: "a"))
        // Its own slot is not an eviction: replacing "a" is allowed.
        let own = try table.reserve(key: "a", sourceUUID: UUID(), evicting: .none)
        #expect(own.replacesExisting)
    }

    /// Without `replacingOwn`, a write that has no pixels yet takes only a free slot: the key's
    /// entry stays readable, as it was, until a write that has its pixels reserves again (a
    /// runtime cache's second fetch of a key published meanwhile by the first, then failing).
    @Test func aWriteWithoutPixelsLeavesTheKeysEntryAlone() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 4))
        try put(table, "a")
        let before = try #require(try table.withImage(forKey: "a") { rows(of: $0) })
        let error = #expect(throws: ImageTableError.self) {
            _ = try table.reserve(key: "a", sourceUUID: UUID(), evicting: .none, replacingOwn: false)
        }
        #expect(error?.code == .full)
        #expect(try table.withImage(forKey: "a") { rows(of: $0) } == before, "the entry is untouched")
        let fresh = try table.reserve(key: "b", sourceUUID: UUID(), evicting: .none, replacingOwn: false)
        #expect(!fresh.replacesExisting && fresh.evictedKey == nil)
        table.abandon(fresh)
        #expect(table.count == 1 && table.contains(key: "a"))
    }

    @Test func lruOrderSurvivesReopening() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, descriptor(capacity: 3))
            for key in ["a", "b", "c"] { try put(table, key) }
            _ = try table.withImage(forKey: "a") { _ in 0 }
            _ = try table.withImage(forKey: "b") { _ in 0 }
        }
        let table = try openTable(path, descriptor(capacity: 3))
        #expect(try put(table, "d").evictedKey == "c")
    }

    /// A read in another process (a writable reader stamping recency) earns a second chance.
    @Test func recencyStampedByOthersGivesASecondChance() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 2))
        try put(table, "old")
        try put(table, "new")
        let slot = try #require(table.entry(forKey: "old")?.slot)
        table.file.record(slot).setRecency(table.file.nextClock())
        #expect(try put(table, "third").evictedKey == "new")
    }

    @Test func maximumCountIsAHardCapOnEntriesAndFileSize() throws {
        let dir = try TemporaryDirectory()
        let d = descriptor(width: 40, height: 30, capacity: 25)
        let table = try openTable(dir.file("t.imagetable"), d)
        var evictions = 0
        for i in 0..<300 {
            let outcome = try put(table, "key-\(i % 97)")
            if outcome.evictedKey != nil { evictions += 1 }
            #expect(table.count <= 25)
        }
        #expect(table.count == 25 && evictions > 0)
        var st = stat()
        #expect(stat(table.path, &st) == 0)
        #expect(Int(st.st_size) <= table.layout.maxFileBytes)
        #expect(Int(st.st_size) == table.layout.maxFileBytes, "every slot used: the file is exactly full size")
    }

    @Test func theFileGrowsOnlyAsSlotsAreUsed() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(width: 64, height: 64, capacity: 1000))
        var st = stat()
        _ = stat(table.path, &st)
        #expect(Int(st.st_size) == table.layout.slotsOffset)
        try put(table, "one")
        _ = stat(table.path, &st)
        #expect(Int(st.st_size) <= table.layout.slotsOffset + 16 * table.layout.slotStride)
    }

    /// Eviction and lookup stay correct at a large capacity; the benchmark shows they stay O(1).
    @Test func largeCapacityEvictsInOrder() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(width: 1, height: 1, style: .grayscale8, capacity: 2000))
        for i in 0..<2000 { try put(table, "k\(i)") }
        for i in stride(from: 0, to: 2000, by: 2) { _ = try table.withImage(forKey: "k\(i)") { _ in 0 } }
        // The odd keys are now the least recently used, oldest first.
        for i in 0..<10 { #expect(try put(table, "new\(i)").evictedKey == "k\(2 * i + 1)") }
    }
}

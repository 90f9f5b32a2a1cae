import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A staged rewrite of a key (a bake re-rendering a changed source) keeps the key's old entry
/// readable until the publish: the reservation cleared it at once, and a reader looking the key
/// up found nothing for a whole batch (34 of 127 lookups of a key being re-baked, in a review).
@Suite struct KeptEntryTests {
    static let full = PixelRect(x: 0, y: 0, width: 7, height: 5)

    /// Reserves a staged rewrite of `key` filled with `pattern(for: pixelsOf)`.
    static func rewrite(_ table: ImageTableWriter, _ key: String, pixelsOf name: String) throws -> SlotReservation {
        var r = try table.reserve(key: key, sourceUUID: UUID(), staged: true)
        let bytes = pattern(for: name, layout: table.layout, bytesPerRow: r.bytesPerRow)
        bytes.withUnsafeBytes { r.pixels.copyMemory(from: $0) }
        r.contentRect = full
        return r
    }

    static func read(_ path: String, _ key: String) throws -> [UInt8]? {
        try ImageTableReader(path: path).withImage(forKey: key) { rows(of: $0) }
    }

    @Test func anEntryBeingRewrittenIsReadUntilThePublish() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4), durability: .flushed)
        defer { table.close() }
        try put(table, "k")
        let r = try Self.rewrite(table, "k", pixelsOf: "k2")
        #expect(r.isStaged)
        #expect(try Self.read(path, "k") == pattern(for: "k", layout: table.layout), "the old entry, whole, while the new one is staged")
        #expect(try ImageTableReader(path: path).header.layout.capacity == 4 && table.file.entryCount == 1, "still counted")
        try table.publish([r])
        #expect(try Self.read(path, "k") == pattern(for: "k2", layout: table.layout))
        #expect(table.count == 1 && table.file.entryCount == 1)
        #expect(TableVerifier.verify(path: path).isValid)
    }

    @Test func anAbandonedRewriteLeavesTheEntryWhereItWas() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 1), durability: .flushed)
        defer { table.close() }
        let slot = try put(table, "k").slot
        table.abandon(try Self.rewrite(table, "k", pixelsOf: "k2"))
        #expect(try Self.read(path, "k") == pattern(for: "k", layout: table.layout))
        #expect(table.count == 1 && table.file.entryCount == 1)
        // Back in the LRU order: the full table replaces it for another key.
        let x = try put(table, "x")
        #expect(x.slot == slot && x.evictedKey == "k")
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// While its rewrite is pending, the key's entry is neither deleted nor taken by name for
    /// another key (both would free a slot the rewrite still holds), nor chosen by an LRU order
    /// built from the records, as a writer opened afresh builds it at its first eviction.
    @Test func aKeyBeingRewrittenIsNoOtherWritesSlot() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let first = try openTable(path, descriptor(capacity: 2), durability: .flushed)
            try put(first, "k")
            try put(first, "j")
            // k the least recently used: the first to go, were it not being rewritten.
            _ = try first.withImage(forKey: "j") { _ in () }
            first.close()
        }
        let table = try openTable(path, descriptor(capacity: 2), durability: .flushed)
        defer { table.close() }
        let kSlot = try #require(table.entry(forKey: "k")?.slot)
        let r = try Self.rewrite(table, "k", pixelsOf: "k2")
        #expect(try table.delete(key: "k") == false)
        #expect(throws: ImageTableError.self) { try table.reserve(key: "y", sourceUUID: UUID(), evicting: .entry(key: "k")) }
        let x = try put(table, "x")
        #expect(x.slot != kSlot && x.evictedKey == "j")
        try table.publish([r])
        #expect(try Self.read(path, "k") == pattern(for: "k2", layout: table.layout))
        #expect(try Self.read(path, "x") == pattern(for: "x", layout: table.layout))
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// An abandoned rewrite moves the record's generation on, though nothing of the entry
    /// changed: the key's next reservation of the slot is another, and a second abandon of the
    /// first (which is idempotent) or a publish of it finds it gone. With the generation left as
    /// it was, the next reservation had the first's very slot and generation, and either call
    /// tore the next one down (its staging memory freed under its filler, its slot given away).
    @Test func aStaleReservationIsNotTheNextOne() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4), durability: .flushed)
        defer { table.close() }
        try put(table, "k")
        let first = try Self.rewrite(table, "k", pixelsOf: "k2")
        table.abandon(first)
        let second = try Self.rewrite(table, "k", pixelsOf: "k3")
        #expect(second.slot == first.slot && second.generation != first.generation)
        table.abandon(first)
        #expect(throws: ImageTableError.self) { try table.publish([first]) }
        try table.publish([second])
        #expect(try Self.read(path, "k") == pattern(for: "k3", layout: table.layout))
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// A writer closed with a rewrite pending leaves the old entry, readable by the next.
    @Test func aCloseLeavesTheKeptEntry() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4), durability: .flushed)
        try put(table, "k")
        _ = try Self.rewrite(table, "k", pixelsOf: "k2")
        table.close()
        let reopened = try openTable(path, descriptor(capacity: 4), durability: .flushed)
        defer { reopened.close() }
        #expect(reopened.notices.isEmpty, "\(reopened.notices)")
        #expect(try reopened.withImage(forKey: "k") { rows(of: $0) } == pattern(for: "k", layout: reopened.layout))
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct RoundTripTests {
    @Test(arguments: PixelStyle.allCases)
    func pixelsRoundTripForEveryStyle(style: PixelStyle) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(width: 33, height: 17, style: style, capacity: 5)
        let keys = ["a", "b/c.png", "ünï/😀"]
        do {
            let table = try openTable(path, d)
            for key in keys { try put(table, key) }
            #expect(table.count == 3)
        }
        // A fresh writer and an independent reader both see exactly the committed bytes.
        let reader = try ImageTableReader(path: path)
        let writer = try openTable(path, d)
        for key in keys {
            let expected = pattern(for: key, layout: writer.layout)
            #expect(try reader.withImage(forKey: key) { rows(of: $0) } == expected)
            #expect(try writer.withImage(forKey: key) { rows(of: $0) } == expected)
            let view = try #require(reader.unsafeImage(forKey: key))
            #expect(view.bytesPerRow == writer.layout.bytesPerRow && view.style == style && view.width == 33)
            // The view is the mapping itself: slot i at slotsOffset + i × stride, no copy.
            let info = try #require(reader.entry(forKey: key))
            #expect(view.baseAddress == UnsafeRawPointer(reader.file.base + reader.layout.slotOffset(info.slot)))
        }
        #expect(try reader.withImage(forKey: "missing") { _ in 1 } == nil)
    }

    @Test func staleSourceIsAMiss() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor())
        let source = UUID()
        try put(table, "k", source: source)
        #expect(try table.withImage(forKey: "k", sourceUUID: source) { _ in true } == true)
        #expect(try table.withImage(forKey: "k", sourceUUID: UUID()) { _ in true } == nil)
        #expect(table.contains(key: "k") && table.contains(key: "k", sourceUUID: source))
        #expect(!table.contains(key: "k", sourceUUID: UUID()))
        #expect(try ImageTableReader(path: table.path).withImage(forKey: "k", sourceUUID: UUID()) { _ in true } == nil)
    }

    @Test func contentRectIsRecordedAndChecked() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(width: 10, height: 10))
        try table.write(key: "k", sourceUUID: UUID()) { $0.contentRect = PixelRect(x: 0, y: 2, width: 10, height: 6) }
        #expect(try table.withImage(forKey: "k") { $0.contentRect } == PixelRect(x: 0, y: 2, width: 10, height: 6))
        #expect(throws: ImageTableError.self) {
            try table.write(key: "bad", sourceUUID: UUID()) { $0.contentRect = PixelRect(x: 5, y: 0, width: 6, height: 1) }
        }
        #expect(!table.contains(key: "bad") && table.count == 1)
    }

    @Test func deleteEnumerateAndOverwrite() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 3))
        try put(table, "a")
        try put(table, "b")
        let replaced = try put(table, "a")
        #expect(replaced.replacedExisting && replaced.evictedKey == nil)
        #expect(table.entries().map(\.key) == ["a", "b"])
        #expect(try table.delete(key: "a"))
        #expect(try !table.delete(key: "a"))
        #expect(table.entries().map(\.key) == ["b"] && table.count == 1)
        // The freed slot is reused before the file grows.
        #expect(try put(table, "c").slot == 0)
    }

    @Test func overlongKeyIsRejected() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor())
        let error = #expect(throws: ImageTableError.self) { try put(table, String(repeating: "x", count: 161)) }
        #expect(error?.code == .invalidArgument)
        try put(table, String(repeating: "x", count: 160))
    }

    @Test func aFailingFillLeavesNothingBehind() throws {
        struct Boom: Error {}
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 1))
        try put(table, "keep")
        #expect(throws: Boom.self) { try table.write(key: "new", sourceUUID: UUID()) { _ in throw Boom() } }
        // The abandoned write evicted "keep" to make room: eviction happens at reservation.
        #expect(!table.contains(key: "new") && table.count == 0)
        #expect(TableVerifier.verify(path: table.path).isValid)
    }

    /// Abandoning twice, as a caller that abandons after a failure its helper already cleaned
    /// up does, must not reach a newer reservation of the same key: going by the key, it tore
    /// that one down and freed its slot a second time, so two keys were published into one slot.
    @Test func aSecondAbandonLeavesANewerReservationOfTheKeyAlone() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 3))
        let r1 = try table.reserve(key: "k", sourceUUID: UUID())
        table.abandon(r1)
        let r2 = try table.reserve(key: "k", sourceUUID: UUID())
        #expect(r2.slot == r1.slot, "the freed slot is taken again first")
        table.abandon(r1)
        let pixels = pattern(for: "k", layout: table.layout, bytesPerRow: table.layout.bytesPerRow)
        r2.pixels.copyBytes(from: pixels)
        try table.publish([r2])
        let other = try table.reserve(key: "other", sourceUUID: UUID())
        #expect(other.slot != r2.slot, "the published slot was handed out again")
        table.abandon(other)
        #expect(table.count == 1 && TableVerifier.verify(path: table.path).isValid)
        // A reservation given back cannot be published afterwards either.
        let error = #expect(throws: ImageTableError.self) { try table.publish([r1]) }
        #expect(error?.message.contains("no longer pending") == true, "\(String(describing: error))")
        #expect(try table.withImage(forKey: "k") { rows(of: $0) } == pattern(for: "k", layout: table.layout))
    }
}

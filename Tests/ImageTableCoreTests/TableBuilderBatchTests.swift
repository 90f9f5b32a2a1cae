import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// `TableBuilder` writes its slots in batches of about 1 MiB (one `pwrite` each, not one per
/// entry): every entry must still land in its own slot, with zero padding, across batch
/// boundaries, a last partial batch and a copy refused for damage in the middle of a batch.
struct TableBuilderBatchTests {
    @Test func entriesLandInTheirSlotsAcrossBatches() throws {
        let dir = try TemporaryDirectory()
        // 30×30 BGRA: 3,600 bytes of pixels in a 4 KiB stride, 256 slots a batch.
        let source = dir.file("source.imagetable")
        let table = try openTable(source, descriptor(width: 30, height: 30, capacity: 700))
        let keys = (0..<600).map { String(format: "k%04d", $0) }
        for key in keys { try put(table, key) }
        let damagedKey = "k0300"
        let damagedSlot = try #require(table.entry(forKey: damagedKey)?.slot)
        let layout = table.layout
        table.close()
        // A flipped byte in one slot: its copy is refused, and the next entry takes its place
        // in the batch.
        try invertByte(in: source, at: layout.slotOffset(damagedSlot) + 100)

        let reader = try ImageTableReader(path: source)
        let copy = dir.file("copy.imagetable")
        let builder = try TableBuilder(path: copy, header: TableBuilder.header(like: reader.header, createdAt: 0))
        var refused: [String] = []
        for key in keys {
            let info = try #require(reader.entry(forKey: key))
            if try builder.append(copying: info, from: reader, recency: 1) != .copied { refused.append(key) }
        }
        try builder.finish()
        #expect(refused == [damagedKey])

        let built = try ImageTableReader(path: copy)
        #expect(built.count == 599)
        let file = try #require(FileHandle(forReadingAtPath: copy))
        defer { try? file.close() }
        for (slot, key) in keys.filter({ $0 != damagedKey }).enumerated() {
            let entry = try #require(built.entry(forKey: key), "\(key)")
            #expect(entry.slot == slot, "\(key)")
            let pixels = try built.withImage(forKey: key) { rows(of: $0) }
            #expect(pixels == pattern(for: key, layout: layout), "\(key) in slot \(slot)")
            try file.seek(toOffset: UInt64(layout.slotOffset(slot) + layout.imageBytes))
            let padding = try #require(try file.read(upToCount: layout.slotStride - layout.imageBytes))
            #expect(padding.allSatisfy { $0 == 0 }, "padding of slot \(slot)")
        }
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// Slots are written as whole pages (the image, then the slot's zero padding), so that the file
/// system never has to read a page of a slot back from the disk to complete a write that ends
/// inside it: a worker given the whole slot writes all of it, and a staged replacement is
/// written whole when it is published.
struct WholeSlotWriteTests {
    /// A 9×4 image of 256 bytes in a slot of a page: most of the slot is padding.
    static let format = descriptor(width: 9, height: 4, capacity: 3)

    /// Puts 0xAA in slot `slot`'s padding, as bytes no writer of the format leaves would be.
    static func soilPadding(of table: ImageTableWriter, slot: Int) throws {
        let l = table.layout
        let handle = try #require(FileHandle(forWritingAtPath: table.path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(l.slotOffset(slot) + l.imageBytes))
        try handle.write(contentsOf: [UInt8](repeating: 0xAA, count: l.slotStride - l.imageBytes))
    }

    /// The bytes of slot `slot` in the file: image, then padding.
    static func slotBytes(of table: ImageTableWriter, slot: Int) throws -> (image: [UInt8], padding: [UInt8]) {
        let l = table.layout
        let handle = try #require(FileHandle(forReadingAtPath: table.path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(l.slotOffset(slot)))
        let bytes = [UInt8](try handle.read(upToCount: l.slotStride) ?? Data())
        return (Array(bytes.prefix(l.imageBytes)), Array(bytes.dropFirst(l.imageBytes)))
    }

    @Test func aWorkerGivenTheWholeSlotWritesItsPaddingToo() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), Self.format)
        let l = table.layout
        #expect(l.imageBytes == 256 && l.slotStride >= 4096)
        let reservation = try table.reserve(key: "k", sourceUUID: UUID())
        try Self.soilPadding(of: table, slot: reservation.slot)
        let worker = try DelegatedSlots(path: table.path, parametersHash: Self.format.parametersHash)
        let whole = [UInt8](repeating: 0x5A, count: l.imageBytes) + [UInt8](repeating: 0, count: l.slotStride - l.imageBytes)
        try whole.withUnsafeBytes { try worker.write($0, slot: reservation.slot, generation: reservation.generation) }
        try table.publish([reservation])
        let written = try Self.slotBytes(of: table, slot: reservation.slot)
        #expect(written.image.allSatisfy { $0 == 0x5A } && written.padding.count == l.slotStride - l.imageBytes)
        #expect(written.padding.allSatisfy { $0 == 0 }, "the padding was written over")
        #expect(TableVerifier.verify(path: table.path).isValid)

        // Any other size is still refused.
        let next = try table.reserve(key: "j", sourceUUID: UUID())
        for size in [l.imageBytes + 1, l.slotStride + 1, l.slotStride - 1] {
            #expect(throws: ImageTableError.self) {
                try [UInt8](repeating: 1, count: size).withUnsafeBytes { try worker.write($0, slot: next.slot, generation: next.generation) }
            }
        }
        table.abandon(next)
    }

    @Test func aStagedReplacementIsPublishedAsTheWholeSlot() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), Self.format, durability: .flushed)
        let l = table.layout
        let slot = try put(table, "k").slot
        try Self.soilPadding(of: table, slot: slot)
        let reservation = try table.reserve(key: "k", sourceUUID: UUID(), evicting: .none, staged: true)
        #expect(reservation.isStaged && reservation.slot == slot && reservation.pixels.count == l.imageBytes)
        reservation.pixels.initializeMemory(as: UInt8.self, repeating: 0x33)
        try table.publish([reservation])
        let written = try Self.slotBytes(of: table, slot: slot)
        #expect(written.image.allSatisfy { $0 == 0x33 })
        #expect(written.padding.allSatisfy { $0 == 0 }, "the padding was written over")
        #expect(try table.withImage(forKey: "k") { $0.bytes.allSatisfy { $0 == 0x33 } } == true)
        #expect(TableVerifier.verify(path: table.path).isValid)
    }
}

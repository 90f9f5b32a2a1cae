import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// `preallocate(slots:)`: a writer that knows how many entries it is about to write backs their
/// slots in one allocation, and writing them then never grows the file.
@Suite struct PreallocateTests {
    private func size(_ path: String) throws -> (bytes: Int, allocated: Int) {
        var st = stat()
        try #require(stat(path, &st) == 0)
        return (Int(st.st_size), Int(st.st_blocks) * 512)
    }

    @Test func theSlotsAreBackedAtOnceAndWritingThemDoesNotGrowTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(width: 64, height: 64, capacity: 100)
        let layout = try d.layout()
        let table = try openTable(path, d)
        try table.preallocate(slots: 40)
        let backed = layout.slotOffset(39) + layout.slotStride
        let after = try size(path)
        #expect(after.bytes == backed)
        // Blocks, not a hole: 40 slots of 16 KiB are on disk (the slots alone are 640 KiB).
        #expect(after.allocated >= 40 * layout.slotStride)

        for i in 0..<40 { try put(table, "k\(i)") }
        #expect(try size(path).bytes == backed, "the 40 writes found their slots backed")
        try put(table, "k40")
        #expect(try size(path).bytes > backed, "the 41st slot grows the file as before")
        for i in 0...40 {
            let read = try table.withImage(forKey: "k\(i)") { rows(of: $0) }
            #expect(read == pattern(for: "k\(i)", layout: layout))
        }
        #expect(TableVerifier.verify(path: path).isValid)
    }

    @Test func moreSlotsThanTheCapacityBackTheWholeTableAndNoMore() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(width: 16, height: 16, capacity: 8)
        let layout = try d.layout()
        let table = try openTable(path, d)
        try table.preallocate(slots: 1_000)
        #expect(try size(path).bytes == layout.slotOffset(7) + layout.slotStride)
        try table.preallocate(slots: 0)
        #expect(try size(path).bytes == layout.slotOffset(7) + layout.slotStride, "never shrinks")
    }

    @Test func aClosedWriterRefuses() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor())
        table.close()
        let error = #expect(throws: ImageTableError.self) { try table.preallocate(slots: 2) }
        #expect(error?.code == .notWritable)
    }
}

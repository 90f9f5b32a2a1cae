import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// The persisted hash index of format version 2: lookups through it, what its damage costs and
/// how it is repaired, how stale buckets are reused and the index rebuilt, and what a large
/// capacity costs (nothing until it is used).
struct HashIndexTests {
    /// Zeroes both bucket areas, as a damaged disk or a careless tool might.
    static func wipeIndex(_ path: String) throws {
        let layout = try TableFile(path: path, writable: false).layout
        let fd = open(path, O_RDWR)
        defer { close(fd) }
        let zeros = [UInt8](repeating: 0, count: 2 * layout.bucketCount * TableLimits.bucketBytes)
        #expect(pwrite(fd, zeros, zeros.count, off_t(layout.bucketsOffset)) == zeros.count)
    }

    @Test func aLostIndexIsReportedAndRebuiltByTheNextWriter() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let format = descriptor(capacity: 8)
        let keys = ["a", "b", "c", "d", "e"]
        do {
            let table = try openTable(path, format)
            for key in keys { try put(table, key) }
        }
        try Self.wipeIndex(path)
        let reader = try ImageTableReader(path: path)
        #expect(try reader.withImage(forKey: "c") { _ in true } == nil, "the records are there, but nothing leads to them")
        #expect(reader.entries().isEmpty && reader.notices.count == 5 && reader.notices.allSatisfy { $0.kind == .damagedIndex })
        let report = TableVerifier.verify(path: path)
        #expect(report.verdict == .damaged && report.problems.map(\.code) == Array(repeating: .damagedIndex, count: 5))
        #expect(report.problems.first?.description == "slot 0 (a): the hash index does not lead to this entry, so readers miss it [damaged-index]")

        let writer = try openTable(path, format)
        #expect(writer.notices.map(\.message) == ["the hash index did not lead to 5 entries; rebuilt it"])
        #expect(writer.indexRebuilds == 1 && writer.count == 5)
        writer.close()
        for key in keys {
            #expect(try reader.withImage(forKey: key) { rows(of: $0) } == pattern(for: key, layout: reader.layout), "\(key)")
        }
        #expect(TableVerifier.verify(path: path).isValid)
    }

    @Test func repairRebuildsALostIndex() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, descriptor(capacity: 4))
            for key in ["x", "y"] { try put(table, key) }
        }
        try Self.wipeIndex(path)
        let report = try TableRepair.repair(path: path, lockTimeout: 1)
        #expect(report.problems.map(\.code) == [.damagedIndex, .damagedIndex])
        let reader = try ImageTableReader(path: path)
        #expect(reader.entries().map(\.key) == ["x", "y"] && reader.notices.isEmpty)
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// Deletes leave stale buckets; inserts reuse them, and when they crowd the index anyway it
    /// is rebuilt: after thousands of writes and deletes of distinct keys, the active area is
    /// never more than three quarters full and every entry is found.
    @Test func staleBucketsAreReusedAndTheIndexRebuiltWhenCrowded() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(width: 1, height: 1, style: .grayscale8, capacity: 64))
        defer { table.close() }
        var live: [String] = []
        var peak: UInt64 = 0
        for n in 0..<4000 {
            try put(table, "key-\(n)")
            live.append("key-\(n)")
            if live.count > 48 { try table.delete(key: live.removeFirst()) }
            peak = max(peak, table.file.usedBuckets)
        }
        #expect(table.indexRebuilds > 10)
        #expect(peak <= UInt64(table.layout.bucketCount / 4 * 3) + 1, "used buckets peaked at \(peak) of \(table.layout.bucketCount)")
        let reader = try ImageTableReader(path: path)
        #expect(reader.count == 48)
        for key in live { #expect(try reader.withImage(forKey: key) { _ in true } == true, "\(key)") }
        #expect(try reader.withImage(forKey: "key-0") { _ in true } == nil)
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// A capacity past version 1's million costs nothing until it is used: the index is a hole,
    /// and the file's blocks grow with the entries written.
    @Test func aLargeCapacityCostsWhatIsWritten() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let format = descriptor(width: 1, height: 1, style: .grayscale8, capacity: 5_000_000)
        do {
            let table = try openTable(path, format, durability: .flushed)
            for key in ["one", "two", "three"] { try put(table, key) }
        }
        var st = stat()
        #expect(stat(path, &st) == 0)
        let layout = try format.layout()
        #expect(Int(st.st_size) >= layout.slotsOffset && layout.slotsOffset > 1_400_000_000)
        #expect(Int(st.st_blocks) * 512 < 512 * 1024, "\(Int(st.st_blocks) * 512) bytes allocated")
        let reader = try ImageTableReader(path: path)
        #expect(reader.count == 3 && reader.entries().map(\.key) == ["one", "two", "three"])
        #expect(try reader.withImage(forKey: "two") { rows(of: $0) } == pattern(for: "two", layout: layout))
    }

    /// The file grows by what is written: up to 16 slots at a time when they are small, but by
    /// no more than about 4 MiB beyond the slot needed, so two 4 MiB entries take two slots
    /// (it used to grow 16 slots at a time, 64 MiB here, 1 GiB for 4096×4096 images).
    @Test func theFileGrowsByWhatIsWritten() throws {
        let dir = try TemporaryDirectory()
        let large = try openTable(dir.file("large.imagetable"), descriptor(width: 1024, height: 1024, style: .bgra32, capacity: 100))
        for key in ["a", "b"] { try put(large, key) }
        #expect(large.file.fileSize == large.layout.slotOffset(2))
        let small = try openTable(dir.file("small.imagetable"), descriptor(width: 8, height: 8, style: .grayscale8, capacity: 100))
        try put(small, "a")
        #expect(small.file.fileSize == small.layout.slotOffset(16))
        let mid = try openTable(dir.file("mid.imagetable"), descriptor(width: 400, height: 400, style: .bgra32, capacity: 100))
        try put(mid, "a")
        #expect(mid.file.fileSize == mid.layout.slotOffset(6), "six 628 KiB slots: the most within 4 MiB")
    }

    /// Opening a table of a million slots and looking entries up touches a handful of pages, not
    /// its index: the resident part of the reader's mapping stays within a few MiB (version 1
    /// read all 256 MB of records at open), and listing the entries reads theirs alone.
    @Test func openingALargeTableMapsAlmostNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, descriptor(width: 1, height: 1, style: .grayscale8, capacity: 1_000_000))
            for n in 0..<1000 { try put(table, "key-\(n)") }
            #expect(Self.residentBytes(of: path) < 16 << 20, "the writer's open and writes: \(Self.residentBytes(of: path))")
        }
        let reader = try ImageTableReader(path: path)
        #expect(reader.count == 1000)
        for n in stride(from: 0, to: 1000, by: 10) { #expect(try reader.withImage(forKey: "key-\(n)") { _ in true } == true) }
        // The measurement sees the mapping: a path that /proc names otherwise would read 0.
        try #require(Self.residentBytes(of: path) > 0, "no resident pages seen for \(path)")
        #expect(Self.residentBytes(of: path) < 4 << 20, "\(Self.residentBytes(of: path)) bytes resident")
        #expect(reader.entries().count == 1000)
        #expect(Self.residentBytes(of: path) < 16 << 20, "after listing: \(Self.residentBytes(of: path)) bytes resident")
    }

    /// The resident bytes of this process's mappings of `path` (Linux: `/proc/self/smaps`).
    static func residentBytes(of path: String) -> Int {
        // /proc files report a size of 0, so they are read to their end rather than by size.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return 0 }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var total = 0, inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.first?.isHexDigit == true {
                inside = line.hasSuffix(" " + path)
            } else if inside, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb * 1024
            }
        }
        return total
    }
}

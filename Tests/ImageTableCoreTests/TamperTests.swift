import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Tables changed on purpose, checksums recomputed: a header whose fields no longer match its
/// parameter hash, and a forged second record for an entity. Neither may be trusted.
struct TamperTests {
    /// A 7×5 table: one 4 KiB slot whichever style, so a header can claim another style and
    /// still decode with the same file size.
    static let format = descriptor(width: 7, height: 5, style: .bgra32, capacity: 4)

    /// A table of `keys`, written and closed, at `t.imagetable` in `dir`.
    static func table(of keys: [String], in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("t.imagetable")
        let table = try openTable(path, format)
        for key in keys { try put(table, key) }
        table.close()
        return path
    }

    /// Rewrites `forged` to claim `genuine`'s entity and source under `key`, keeping its own
    /// pixels' checksum, with a correct record checksum: a forged second record for an entity.
    static func forge(_ forged: IndexRecord, toClaim genuine: IndexRecord, key: String) {
        forged.writeFields(entity: genuine.entityUUID, source: genuine.sourceUUID, key: key, pixelChecksum: forged.pixelChecksum,
                           rect: forged.contentRect, writtenAt: forged.writtenAt)
    }

    /// Rewrites the header as `other` would have it, keeping the original parameter hash, with
    /// a correct header checksum: what a tamperer with the spec in hand writes.
    static func forgeHeader(_ path: String, as other: TableFormat) throws {
        let original = try TableFile(path: path, writable: false).header
        let layout = try other.layout()
        var bytes = [UInt8](repeating: 0, count: TableLimits.headerBytes)
        bytes.withUnsafeMutableBytes { TableHeader(format: other, layout: layout, createdAt: original.createdAt).encode(into: $0.baseAddress!) }
        bytes.replaceSubrange(88..<104, with: original.parametersHash)
        let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<252])) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(252..<256, with: $0) }
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        #expect(pwrite(fd, bytes, 256, 0) == 256)  // the live fields after 256 are left as they are
    }

    @Test func aHeaderThatDisagreesWithItsHashIsRebuilt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, Self.format)
            try put(table, "a")
        }
        var forged = Self.format
        forged.style = .bgr16
        try Self.forgeHeader(path, as: forged)
        #expect(try ImageTableReader(path: path).header.layout.style == .bgr16, "the forgery must decode")

        let table = try openTable(path, Self.format)
        defer { table.close() }
        #expect(table.layout.style == .bgra32 && table.count == 0)
        let reset = try #require(table.notices.first { $0.kind == .reset })
        #expect(reset.message.contains("style '16BitBGR', expected '32BitBGRA'"), "\(reset.message)")
        #expect(try ImageTableReader(path: path).header.layout.style == .bgra32)
    }

    @Test func everyHeaderFieldIsCompared() {
        let header = TableHeader(format: Self.format, layout: try! Self.format.layout(), createdAt: 0)
        #expect(header.disagreements(with: Self.format).isEmpty && header.matches(Self.format))
        var other = Self.format
        other.name = "other"
        other.scale = 3
        other.capacity = 5
        #expect(header.disagreements(with: other) == ["name 'test', expected 'other'", "scale '1', expected '3'",
                                                      "capacity '4', expected '5'"])
        #expect(!header.matches(other))
    }

    /// Record 0 is rewritten to claim "b"'s entity, with its own pixels' checksum and a correct
    /// record checksum. It used to win over the genuine record in slot 1: `b` served `a`'s image.
    /// Readers follow the hash index, which leads to the genuine record, so `b` gets its own
    /// image and the forged record is a notice; `verify` reports both records, and the next
    /// writer drops both (nothing in the records says which is genuine).
    /// A record whose fields no longer match its checksum (its content rectangle changed on
    /// disk) is not served by a hit either: `withImage` served it, with the rectangle it read,
    /// while `entry(forKey:)` and the listing passed over it.
    @Test func aRecordFailingItsChecksumIsAMissForHitsToo() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        try put(table, "a")
        let slot = try #require(table.entry(forKey: "a")?.slot)
        let layout = table.layout
        table.close()
        let fd = open(path, O_RDWR)
        var x: UInt32 = 1
        #expect(pwrite(fd, &x, 4, off_t(layout.recordOffset(slot) + 64)) == 4)  // contentX, outside the checksum's agreement
        close(fd)
        let reader = try ImageTableReader(path: path)
        #expect(reader.entry(forKey: "a") == nil)
        #expect(try reader.withImage(forKey: "a") { _ in true } == nil, "a hit checks the record as a listing does")
    }

    /// The record the index leads to first for an entity, when it is not served (it fails its
    /// checks), ends the lookup: the probe went on along the index and served a second record
    /// claiming the entity further along (FORMAT.md's rule 7: never another).
    @Test func aRecordThatIsNotServedEndsTheLookup() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.table(of: ["a", "b", "c"], in: dir)
        let b = EntityKey.uuid(for: "b")
        do {
            let file = try TableFile(path: path, writable: true)
            let l = file.layout
            let (slotB, slotC) = (try #require(file.indexedSlot(of: b)), try #require(file.indexedSlot(of: EntityKey.uuid(for: "c"))))
            // A second bucket for b on its own probe path, leading to c's slot, forged to claim b.
            let (home, tag) = BucketIndex.hash(b)
            let area = file.base + l.bucketAreaOffset(Int(file.indexSelector & 1))
            var i = Int(truncatingIfNeeded: home) & (l.bucketCount - 1)
            while area.loadUnaligned(fromByteOffset: i * TableLimits.bucketBytes, as: UInt64.self) != 0 { i = (i + 1) & (l.bucketCount - 1) }
            area.storeBytes(of: (UInt64(tag) << 32 | UInt64(slotC + 1)).littleEndian, toByteOffset: i * TableLimits.bucketBytes, as: UInt64.self)
            Self.forge(file.record(slotC), toClaim: file.record(slotB), key: "b")
            // b's own record then fails its checksum: the lookup's first, not served.
            file.base.storeBytes(of: UInt32(1), toByteOffset: l.recordOffset(slotB) + 64, as: UInt32.self)
            #expect(try file.indexedRead(b, source: nil) { rows(of: $0) } == nil, "c's pixels served for b")
        }
    }

    /// Three records claiming one entity: a writer's open dropped the two it met first and kept
    /// the third (the index no longer led anywhere for it, so it was taken for an unindexed entry).
    @Test func aThirdClaimantIsDroppedToo() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.table(of: ["a", "b", "c", "d"], in: dir)
        do {
            let file = try TableFile(path: path, writable: true)
            let genuine = file.record(try #require(file.indexedSlot(of: EntityKey.uuid(for: "b"))))
            for key in ["a", "c"] {
                Self.forge(file.record(try #require(file.indexedSlot(of: EntityKey.uuid(for: key)))), toClaim: genuine, key: "b")
            }
        }
        let table = try openTable(path, Self.format)
        #expect(table.entries().map(\.key) == ["d"] && table.count == 1, "\(table.entries().map(\.key))")
        table.close()
        #expect(TableVerifier.verify(path: path).isValid)
    }

    @Test func twoRecordsForOneEntityAreNeitherServed() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.table(of: ["a", "b", "c"], in: dir)
        do {
            let file = try TableFile(path: path, writable: true)
            Self.forge(file.record(0), toClaim: file.record(1), key: "b")
        }
        let reader = try ImageTableReader(path: path)
        let layout = reader.layout
        #expect(try reader.withImage(forKey: "b") { rows(of: $0) } == pattern(for: "b", layout: layout))
        #expect(try reader.withImage(forKey: "a") { rows(of: $0) } == nil)
        #expect(reader.entry(forKey: "b")?.slot == 1)
        #expect(reader.entries().map(\.key) == ["b", "c"])
        #expect(reader.notices.map(\.slot) == [0] && reader.notices.allSatisfy { $0.kind == .damagedRecord })
        #expect(reader.notices.first?.message == "slot 0: slot 1 also claims this entry's entity, and the index leads there; skipped it")

        let report = TableVerifier.verify(path: path)
        #expect(report.verdict == .damaged && report.validEntries == 1)
        #expect(report.problems.map(\.slot) == [0, 1] && report.problems.allSatisfy { $0.code == .damagedRecord })
        #expect(report.problems.first?.reason == "slot 1 also claims this entry's entity, so neither is trusted")

        let table = try openTable(path, Self.format)
        #expect(table.entries().map(\.key) == ["c"] && table.count == 1)
        table.close()
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// Damage a bake cannot see (the record still names an unchanged source) is cleared by a
    /// repair, which leaves the rest alone and the table sound.
    @Test func repairClearsDamagedEntriesAndKeepsTheRest() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, Self.format)
            for key in ["a", "b", "c", "d"] { try put(table, key) }
        }
        try LiveVerifyTests.flipPixel(slot: 1, in: path)
        try LiveVerifyTests.setGeneration(of: 3, in: path) { $0 | 1 }
        let report = try TableRepair.repair(path: path, lockTimeout: 1)
        #expect(report.problems.map(\.code) == [.pixelChecksumMismatch, .interruptedWrite])
        #expect(report.problems.map(\.slot) == [1, 3])
        let after = TableVerifier.verify(path: path)
        #expect(after.isValid && after.validEntries == 2)
        let reader = try ImageTableReader(path: path)
        #expect(reader.entries().map(\.key) == ["a", "c"] && reader.notices.isEmpty)
        let layout = reader.layout
        #expect(try reader.withImage(forKey: "a") { rows(of: $0) } == pattern(for: "a", layout: layout))

        // A sound table is left as it is; a table held by a writer is `locked`.
        #expect(try TableRepair.repair(path: path, lockTimeout: 1).problems.isEmpty)
        let writer = try openTable(path, Self.format)
        #expect(throws: ImageTableError.self) { try TableRepair.repair(path: path, lockTimeout: 0) }
        writer.close()
    }

    /// A table of two entries, `a` and `b`, closed; returns its path.
    static func tableOfTwo(in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("t.imagetable")
        let table = try openTable(path, Self.format)
        defer { table.close() }
        for key in ["a", "b"] { try put(table, key) }
        return path
    }

    /// Writes `count` over the header's live entry count, as a writer stopped between a record
    /// and the count, or a crash that lost the header's page, leaves it.
    static func setEntryCount(_ path: String, _ count: UInt64) {
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        var value = count.littleEndian
        #expect(pwrite(fd, &value, 8, off_t(TableHeader.entryCountOffset)) == 8)
    }

    /// A live entry count that disagrees with the records is reported (it was shown by
    /// `inspect` and passed by `verify`), as something the next writer mends, not damage; a
    /// repair and a writer count again.
    @Test func aStaleEntryCountIsReportedAndCountedAgain() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfTwo(in: dir)
        #expect(TableVerifier.verify(path: path).isValid)
        Self.setEntryCount(path, 3)
        #expect(try ImageTableReader(path: path).count == 3)
        let report = TableVerifier.verify(path: path)
        #expect(report.verdict == .interrupted && report.validEntries == 2)
        #expect(report.problems.map(\.description) == ["header: the header counts 3 entries where the records hold 2, so readers report the wrong count [stale-entry-count]"])

        // Too few is as wrong as too many.
        Self.setEntryCount(path, 0)
        #expect(TableVerifier.verify(path: path).problems.map(\.code) == [.staleEntryCount])
        let repaired = try TableRepair.repair(path: path, lockTimeout: 1)
        #expect(repaired.problems.map(\.code) == [.staleEntryCount] && repaired.validEntries == 2)
        #expect(try ImageTableReader(path: path).count == 2 && TableVerifier.verify(path: path).isValid)

        Self.setEntryCount(path, 1 << 40)
        try openTable(path, Self.format).close()
        #expect(try ImageTableReader(path: path).count == 2 && TableVerifier.verify(path: path).isValid)
    }

    /// An interrupted write may or may not have been counted: either count is consistent, and
    /// only the interrupted write is reported.
    @Test func anInterruptedWriteWidensTheCountAllowed() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfTwo(in: dir)
        let layout = try Self.format.layout()
        let fd = open(path, O_RDWR)
        var generation: UInt64 = 3
        #expect(pwrite(fd, &generation, 8, off_t(layout.recordOffset(1))) == 8)
        close(fd)
        for count: UInt64 in [1, 2] {
            Self.setEntryCount(path, count)
            #expect(TableVerifier.verify(path: path).problems.map(\.code) == [.interruptedWrite], "\(count)")
        }
        Self.setEntryCount(path, 3)
        #expect(TableVerifier.verify(path: path).problems.map(\.code) == [.staleEntryCount, .interruptedWrite])
    }

    /// A writer that publishes between the verifier's readings and its look at the count (a
    /// whole bake can, between two slots) leaves them disagreeing: no finding, where a review's
    /// prune-and-re-add bakes during `verify` made it report a stale count now and then.
    @Test func aWriterBetweenTheReadingsAndTheCountIsNoStaleCount() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfTwo(in: dir)
        let file = try TableFile(path: path, writable: false)
        var pass = VerifierPass(file: file)
        pass.run(slots: 0..<file.scanLimit, attempts: 1)
        do {
            let table = try openTable(path, Self.format)
            try put(table, "c")
        }
        pass.checkEntryCount(writerActive: { false })
        #expect(pass.problems.isEmpty, "\(pass.problems)")

        // The same readings with a count changed behind the writers' back: reported.
        Self.setEntryCount(path, 7)
        var still = VerifierPass(file: file)
        still.run(slots: 0..<file.scanLimit, attempts: 1)
        still.checkEntryCount(writerActive: { false })
        #expect(still.problems.map(\.code) == [.staleEntryCount])
    }
}

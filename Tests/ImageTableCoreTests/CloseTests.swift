import Foundation
import Synchronization
import TestSupport
import Testing
@testable import ImageTableCore

/// After `close()` the writer lock belongs to whoever takes it next: nothing the closed handle
/// does, on any thread, may reach the file.
@Suite struct CloseTests {
    @Test func aReservationPublishedAfterCloseNeverReachesTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(capacity: 4)
        let table = try openTable(path, d)
        var reservation = try table.reserve(key: "late", sourceUUID: UUID())
        table.close()
        let pattern = pattern(for: "late", layout: try d.layout(), bytesPerRow: reservation.bytesPerRow)
        pattern.withUnsafeBytes { reservation.pixels.copyMemory(from: $0) }
        reservation.contentRect = PixelRect(x: 0, y: 0, width: 1, height: 1)
        let error = #expect(throws: ImageTableError.self) { try table.publish([reservation]) }
        #expect(error?.code == .notWritable)

        let next = try openTable(path, d)
        #expect(next.count == 0 && next.notices.isEmpty, "\(next.notices)")
        let slot = UnsafeRawBufferPointer(start: next.file.slot(reservation.slot), count: pattern.count)
        #expect(!slot.elementsEqual(pattern), "pixels written into an old reservation after close reached the file")
        #expect(TableVerifier.verify(path: path).isValid)
    }

    /// The same for a table whose mapping is larger than memory and swap (40 GB here): the
    /// detach asked the kernel to reserve all of it, failed with ENOMEM unnoticed, and left the
    /// file mapped, so late pixels reached the file after the lock was released.
    @Test func aLargeTablesLateReservationNeverReachesTheFileEither() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("large.imagetable")
        let d = TableFormat(name: "large", width: 1024, height: 1024, style: .bgra32, capacity: 10_000)
        let table = try openTable(path, d)
        try put(table, "a")
        let reservation = try table.reserve(key: "late", sourceUUID: UUID())
        table.close()
        reservation.pixels.initializeMemory(as: UInt8.self, repeating: 0xAB)
        #expect(try table.withImage(forKey: "a") { _ in true } == nil, "a closed writer reads nothing")
        let next = try openTable(path, d)
        let slot = UnsafeRawBufferPointer(start: next.file.slot(reservation.slot), count: 4096)
        #expect(!slot.contains(0xAB), "pixels written into an old reservation after close reached the file")
        #expect(next.count == 1)
    }

    @Test func deletesAndUsesAfterCloseAreRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor())
        try put(table, "a")
        let recency = try #require(table.entry(forKey: "a")?.recency)
        table.close()
        #expect(throws: ImageTableError.self) { try table.delete(key: "a") }
        #expect(!table.touch(key: "a"))
        let next = try openTable(path, descriptor())
        #expect(next.entry(forKey: "a")?.recency == recency, "the entry and its recency are as they were")
    }

    /// Closing from several threads at once releases the lock file's descriptor once: a second
    /// `close` of a number another thread has reopened would close someone else's file.
    @Test func concurrentReleasesCloseTheDescriptorOnce() throws {
        let dir = try TemporaryDirectory()
        for round in 0..<200 {
            let lock = try WriterLock(tablePath: dir.file("t\(round).imagetable"), permissions: 0o644, timeout: 1)
            let released = Atomic<Int>(0)
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    if lock.release() { released.add(1, ordering: .relaxed) }
                    group.leave()
                }
            }
            for _ in 0..<4 { start.signal() }
            group.wait()
            #expect(released.load(ordering: .relaxed) == 1, "round \(round)")
        }
    }

    /// A read that a `close()` overtakes reads the zeros the closed writer maps over its table;
    /// a record of generation 0 (as merge and the version 1 upgrade wrote them) matched the zero
    /// page's generation, and the read returned the zeros as the entry.
    @Test func aReadThatACloseOvertakesIsNeverAHitOfZeros() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(capacity: 4)
        do {
            let table = try openTable(path, d)
            try put(table, "k")
            table.close()
        }
        // The generation of a table built record by record: 0.
        let offset = try d.layout().recordOffset(0)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(count: 8))
        try handle.close()
        let table = try openTable(path, d)
        #expect(try table.withImage(forKey: "k") { rows(of: $0) } == pattern(for: "k", layout: table.layout))
        let overtaken = try table.withImage(forKey: "k") { view -> [UInt8] in
            table.close()
            return rows(of: view)
        }
        #expect(overtaken == nil || overtaken == pattern(for: "k", layout: table.layout), "a hit of zeros")
    }

    /// Records a `TableBuilder` commits (merge, the upgrade) have generation 2, as a writer's
    /// first write leaves them.
    @Test func builtRecordsHaveAWritersGeneration() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("a.imagetable"), built = dir.file("b.imagetable")
        let d = descriptor(capacity: 4)
        do {
            let table = try openTable(source, d)
            try put(table, "k")
            table.close()
        }
        let reader = try ImageTableReader(path: source)
        let builder = try TableBuilder(path: built, header: TableBuilder.header(like: reader.header, createdAt: 0))
        for info in reader.entries() { _ = try builder.append(copying: info, from: reader, recency: 1) }
        try builder.finish()
        let bytes = try #require(FileManager.default.contents(atPath: built))
        let offset = try d.layout().recordOffset(0)
        let generation = bytes[offset..<offset + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        #expect(generation == 2)
        #expect(TableVerifier.verify(path: built).isValid)
    }
}

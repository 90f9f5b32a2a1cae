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
}

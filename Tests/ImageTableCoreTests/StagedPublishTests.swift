import Foundation
import Synchronization
import TestSupport
import Testing
@testable import ImageTableCore

/// A publish writes staged pixels into their slots outside the writer's lock; an abandon of
/// such a reservation meanwhile (another thread's) freed its slot and its staging memory, so the
/// write landed in the slot's next entry, from freed memory.
@Suite struct StagedPublishTests {
    @Test func anAbandonDuringAStagedWriteLeavesTheSlotsNextEntryWhole() throws {
        for round in 0..<32 {
            let dir = try TemporaryDirectory()
            let d = descriptor(capacity: 2)
            // Flushed: the write of the staged pixels follows a flush of the whole file, which
            // holds the window open for the other thread.
            let table = try openTable(dir.file("t.imagetable"), d, durability: .flushed)
            try put(table, "k")
            try put(table, "y")
            var again = try table.reserve(key: "k", sourceUUID: UUID(), staged: true)
            let stale = pattern(for: "k\(round)", layout: table.layout, bytesPerRow: again.bytesPerRow)
            stale.withUnsafeBytes { again.pixels.copyMemory(from: $0) }
            again.contentRect = PixelRect(x: 0, y: 0, width: table.layout.width, height: table.layout.height)
            let published = DispatchSemaphore(value: 0)
            final class Flag: Sendable { let done = Atomic<Bool>(false) }
            let flag = Flag()
            let reservation = again
            Thread {
                _ = try? table.publish([reservation])
                flag.done.store(true, ordering: .releasing)
                published.signal()
            }.start()
            // Into the write's window (a round whose publish ended before this thread looked
            // proves nothing, and goes on).
            while table.state.withLock({ $0.stagedWrites }) == 0 && !flag.done.load(ordering: .acquiring) { usleep(10) }
            table.abandon(reservation)
            // The abandoned slot, had it been freed, is the one this reservation takes.
            var x = try table.reserve(key: "x", sourceUUID: UUID())
            let fresh = pattern(for: "x", layout: table.layout, bytesPerRow: x.bytesPerRow)
            fresh.withUnsafeBytes { x.pixels.copyMemory(from: $0) }
            x.contentRect = again.contentRect
            published.wait()
            try table.publish([x])
            let read = try table.withImage(forKey: "x") { rows(of: $0) }
            #expect(read == pattern(for: "x", layout: table.layout), "round \(round): another key's pixels in x's entry")
            #expect(TableVerifier.verify(path: dir.file("t.imagetable")).isValid)
            table.close()
        }
    }

    /// A staged reservation flushes nothing of the entry its slot held; abandoned, its slot is
    /// free while the disk still holds that entry's committed record. The next reservation of
    /// the slot took it as empty and wrote pixels straight in, so a power cut could leave the
    /// old record over the new pixels: it stages (or flushes) as for a slot that holds an entry.
    @Test func aSlotFreedWithItsRemovalUnflushedIsReservedAsOneThatHoldsAnEntry() throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(capacity: 1), durability: .flushed)
        try put(table, "a")
        let again = try table.reserve(key: "a", sourceUUID: UUID(), staged: true)
        #expect(again.isStaged)
        table.abandon(again)
        let next = try table.reserve(key: "b", sourceUUID: UUID(), staged: true)
        #expect(next.slot == again.slot && next.isStaged, "the removal of a's entry is not on disk")
        table.abandon(next)
        // A delete flushes its removal: the slot is then empty on disk too.
        try put(table, "c")
        #expect(try table.delete(key: "c"))
        #expect(!(try table.reserve(key: "d", sourceUUID: UUID(), staged: true)).isStaged)
        table.close()
    }
}

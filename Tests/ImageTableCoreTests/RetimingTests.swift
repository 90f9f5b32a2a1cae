import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// `ImageTableWriter.updateSourceModified`: a record-only change of the time `imagetable merge`
/// ranks entries by, for sources touched without changing.
struct RetimingTests {
    /// Writes `pattern(for: key)` as `key`'s entry, recording `modifiedNs` as its source's time.
    @discardableResult
    private func put(_ table: ImageTableWriter, _ key: String, modifiedNs: Int64) throws -> Int {
        var r = try table.reserve(key: key, sourceUUID: UUID())
        let l = table.layout, pixels = pattern(for: key, layout: l, bytesPerRow: l.bytesPerRow)
        pixels.withUnsafeBytes { r.pixels.copyMemory(from: $0) }
        r.contentRect = PixelRect(x: 1, y: 0, width: l.width - 2, height: l.height)
        r.sourceModifiedNs = modifiedNs
        return try table.publish([r])[0].slot
    }

    /// The record's 256 bytes as they are in the mapping.
    private func recordBytes(_ table: ImageTableWriter, slot: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: table.file.record(slot).base, count: TableLimits.recordBytes))
    }

    @Test(arguments: [ImageTableWriter.Durability.flushed, .processCrashOnly])
    func onlyTheTimeAndTheChecksumChange(durability: ImageTableWriter.Durability) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4), durability: durability)
        let a = try put(table, "a", modifiedNs: 1_000), b = try put(table, "b", modifiedNs: 2_000)
        let (beforeA, beforeB) = (recordBytes(table, slot: a), recordBytes(table, slot: b))
        let infoA = try #require(table.entry(forKey: "a"))
        // Read through a reader: the writer's reads count as uses, which change the recency.
        let pixelsA = try ImageTableReader(path: path).withImage(forKey: "a") { rows(of: $0) }
        let changeCount = table.file.changeCount

        let updated = try table.updateSourceModified([("a", 1_700_000_000_123_456_789), ("missing", 5), ("b", 2_000)])
        #expect(updated == [a], "only the held key whose time differs")
        let afterA = recordBytes(table, slot: a)
        let generation = { (bytes: [UInt8]) in bytes[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) } }
        #expect(generation(afterA) == generation(beforeA) + 2, "the seqlock opened and closed once")
        // Recency, state, UUIDs, pixel checksum, key, rectangle and writtenAt: byte for byte.
        for range in [8..<20, 24..<88, 96..<256] { #expect(afterA[range] == beforeA[range], "bytes \(range)") }
        #expect(afterA[88..<96] != beforeA[88..<96] && afterA[20..<24] != beforeA[20..<24])
        let record = table.file.record(a)
        #expect(record.storedChecksum == record.computeChecksum())
        #expect(recordBytes(table, slot: b) == beforeB, "an entry recording the time already is left alone")
        #expect(table.file.changeCount == changeCount, "no entry came or went")

        // Another process reads the new time, and every other field and the pixels as they were.
        let reader = try ImageTableReader(path: path)
        #expect(try reader.withImage(forKey: "a") { rows(of: $0) } == pixelsA)
        let readA = try #require(reader.entry(forKey: "a"))
        #expect(readA.sourceModifiedNs == 1_700_000_000_123_456_789)
        #expect(readA.key == infoA.key && readA.sourceUUID == infoA.sourceUUID && readA.slot == infoA.slot
                && readA.recency == infoA.recency && readA.contentRect == infoA.contentRect
                && readA.pixelChecksum == infoA.pixelChecksum && readA.writtenAt == infoA.writtenAt)
        #expect(reader.notices.isEmpty && TableVerifier.verify(path: path).isValid)
        #expect(try table.updateSourceModified([("a", 1_700_000_000_123_456_789)]).isEmpty, "nothing left to change")

        // The next writer finds a sound table with the new time.
        table.close()
        let reopened = try openTable(path, descriptor(capacity: 4))
        #expect(reopened.notices.isEmpty && reopened.count == 2)
        #expect(reopened.entry(forKey: "a")?.sourceModifiedNs == 1_700_000_000_123_456_789)
    }

    /// A writer killed between the odd and the even generation leaves what an interrupted write
    /// leaves: that one entry discarded at the next open, every other kept.
    @Test func anUpdateCutShortCostsThatEntryAlone() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        let a = try put(table, "a", modifiedNs: 1_000)
        try put(table, "b", modifiedNs: 2_000)
        // What updateSourceModified has done at that instant: the generation odd, the time stored.
        let record = table.file.record(a)
        record.beginWrite(record.generation | 1)
        record.setSourceModified(9_000)
        #expect(try ImageTableReader(path: path).entry(forKey: "a") == nil, "a reader passes over the record")
        table.close()
        let reopened = try openTable(path, descriptor(capacity: 4))
        #expect(reopened.notices.map(\.kind) == [.discardedInterruptedWrite] && reopened.notices.first?.slot == a)
        #expect(reopened.entries().map(\.key) == ["b"] && reopened.entry(forKey: "b")?.sourceModifiedNs == 2_000)
    }

    @Test func aClosedWriterChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        try put(table, "a", modifiedNs: 1_000)
        table.close()
        let error = #expect(throws: ImageTableError.self) { try table.updateSourceModified([("a", 5)]) }
        #expect(error?.code == .notWritable)
        #expect(try ImageTableReader(path: path).entry(forKey: "a")?.sourceModifiedNs == 1_000)
    }

    /// A reader looking an entry up while its time is being updated finds it: the record is odd
    /// for a few stores, and readers wait that long for it (they called it absent). A machine
    /// busy with other tests can preempt the writer thread while the record is odd, longer than a
    /// reader waits, so a run with more than one miss in 1,000 is run again, up to five times:
    /// the fault this guards against missed 0.8–4 % of lookups in every run. Each run goes on
    /// until it has looked up and updated enough to mean something, not for a fixed time: under
    /// the full suite on 2 cores a fixed half second could fall short of them (4,608 lookups with
    /// six busy loops beside it, where an idle machine does 14,000).
    @Test func lookupsDuringUpdatesFindTheEntry() throws {
        var runs: [(updates: Int, lookups: Int, misses: Int)] = []
        for _ in 0..<5 {
            runs.append(try lookUpDuringUpdates())
            if let last = runs.last, last.misses * 1000 < last.lookups { break }
        }
        let best = runs.min { $0.misses * $1.lookups < $1.misses * $0.lookups }!
        #expect(best.updates >= Self.enough.updates && best.lookups >= Self.enough.lookups, "\(runs)")
        // A writer thread preempted in the middle of an update can still cost a lookup or two:
        // CI, with the suite's other tests and a build beside it, saw 6 in 5,888 in each of three
        // runs. The bound is half the fault's least (0.8 %).
        #expect(best.misses * 250 < best.lookups, "misses of lookups, each run: \(runs)")
    }

    /// What a run must reach: an idle machine gets there in about a quarter of a second, one
    /// running six busy loops besides in about a second.
    private static let enough = (updates: 2_000, lookups: 5_000)

    /// Lookups of one entry while another thread updates its time, until both have done
    /// ``enough`` or 5 s have gone by (then the counts fall short and the test says so).
    private func lookUpDuringUpdates() throws -> (updates: Int, lookups: Int, misses: Int) {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        try put(table, "k", modifiedNs: 1)
        let reader = try ImageTableReader(path: path)
        let stop = AdaptiveMutex(false), updates = AdaptiveMutex(0), stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var t: Int64 = 2
            while !stop.withLock({ $0 }) {
                for _ in 0..<64 {
                    _ = try? table.updateSourceModified([("k", t)])
                    t += 1
                    // Some microseconds between updates, as a bake's come: the fewer the moments a
                    // busy machine can preempt this thread while the record is odd (a reader then
                    // waits for it in vain), the steadier the count of misses.
                    usleep(5)
                }
                updates.withLock { $0 += 64 }
            }
            stopped.signal()
        }
        var lookups = 0, misses = 0
        let deadline = Date().addingTimeInterval(5)
        while (lookups < Self.enough.lookups || updates.withLock({ $0 }) < Self.enough.updates) && Date() < deadline {
            for _ in 0..<256 where (try? reader.withImage(forKey: "k", { _ in true })) != true { misses += 1 }
            lookups += 256
        }
        stop.withLock { $0 = true }
        stopped.wait()
        return (updates.withLock { $0 }, lookups, misses)
    }
}

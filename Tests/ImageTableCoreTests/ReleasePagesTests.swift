import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A writer unmaps the hash index its open checked (every entry's bucket: the whole area), and a
/// batch writer what each batch touched: a bake re-baking a few scattered sources of a large
/// table (their pixels written by its workers) kept every record and hash bucket window it had
/// reserved through, 38 MB of each table for 556 changed sources among 100,000 in tables of a
/// million slots.
struct ReleasePagesTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/smaps"), "resident pages are read from /proc"))
    func replacingScatteredEntriesWrittenElsewhereLeavesLittleMapped() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let format = descriptor(width: 1, height: 1, style: .grayscale8, capacity: 1_000_000)
        let keys = (0..<20_000).map { "key-\($0)" }
        do {
            let table = try openTable(path, format)
            for key in keys { try put(table, key) }
        }
        let table = try openTable(path, format)
        #expect(HashIndexTests.residentBytes(of: path) < 1 << 20, "after open: \(HashIndexTests.residentBytes(of: path)) bytes")
        // The measurement sees the mapping (a path that /proc names otherwise would read 0).
        #expect(try table.withImage(forKey: keys[0]) { _ in true } == true)
        try #require(HashIndexTests.residentBytes(of: path) > 0, "no resident pages seen for \(path)")
        let worker = try DelegatedSlots(path: path, parametersHash: format.parametersHash)
        let pixels = [UInt8](repeating: 0x5A, count: worker.layout.imageBytes)
        let changed = Array(stride(from: 0, to: keys.count, by: 31).map { keys[$0] })
        var peak = 0
        for batch in stride(from: 0, to: changed.count, by: 32).map({ changed[$0..<min($0 + 32, changed.count)] }) {
            var reservations = try batch.map { try table.reserve(key: $0, sourceUUID: UUID()) }
            for i in reservations.indices {
                try pixels.withUnsafeBytes { try worker.write($0, slot: reservations[i].slot, generation: reservations[i].generation) }
                // As a bake's worker does: the writer need not read the pixels back.
                reservations[i].pixelChecksum = pixels.withUnsafeBytes { CRC32.checksum($0) }
            }
            try table.publish(reservations)
            table.releaseMappedPages(slots: [], records: reservations.map(\.slot))
            peak = max(peak, HashIndexTests.residentBytes(of: path))
        }
        #expect(changed.count == 646 && table.count == keys.count)
        // Each reservation's record and bucket fault in 64 KiB windows: 646 of them held 20 MB.
        // What may stay: the windows of the buckets touched since the index was last unmapped,
        // 64 of them (4 MB) as counted, more where probes that found nothing touched others.
        #expect(peak < 4 << 20, "\(peak) bytes of the table stayed mapped")
        #expect(try table.withImage(forKey: changed[7]) { $0.bytes.allSatisfy { $0 == 0x5A } } == true)
    }
}

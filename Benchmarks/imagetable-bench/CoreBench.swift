import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// The table core: lookups, write throughput against `memcpy`, allocations per hit, and how
/// lookup and eviction costs scale from 1,000 to 100,000 entries.
enum CoreBench {
    static let count = 10_000

    static func run() throws {
        print("Table core: \(Harness.grouped(Double(count))) entries of 150×150 32BitBGRA")
        let dir = Harness.scratch("core")
        let d = TableFormat(name: "bench", width: 150, height: 150, style: .bgra32, capacity: count)
        let table = try ImageTableWriter(path: dir + "/bench.imagetable", format: d, options: .init(durability: .processCrashOnly))
        let l = table.layout
        var rng = SystemRandomNumberGenerator()
        let pixels = (0..<l.imageBytes).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let keys = (0..<count).map { "photos/\($0).jpg" }
        let megabytes = Double(count * l.imageBytes) / 1e6

        // Baseline: the same bytes copied into fresh pages, which fault in just as a new table's do.
        let arena = mmap(nil, count * l.imageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        let copy = Harness.time {
            pixels.withUnsafeBytes { src in
                for i in 0..<count { memcpy(arena + i * l.imageBytes, src.baseAddress!, l.imageBytes) }
            }
        }
        munmap(arena, count * l.imageBytes)
        let write = try Harness.time {
            try pixels.withUnsafeBytes { src in
                for key in keys {
                    try table.write(key: key, sourceUUID: UUID()) { r in r.pixels.copyMemory(from: src) }
                }
            }
        }
        Harness.report("memcpy into fresh pages", "\(Harness.grouped(megabytes / copy)) MB/s", "baseline")
        Harness.report("write (copy + CRC-32 + publish, no flush)", "\(Harness.grouped(megabytes / write)) MB/s",
                       String(format: "%.2f× memcpy", copy / write))

        var order = keys
        order.shuffle(using: &rng)
        let uuids = order.map { EntityKey.uuid(for: $0) }
        var sink = 0
        let byKey = Harness.best(of: 3) {
            for key in order { sink &+= (try? table.withImage(forKey: key) { Int($0.bytes[0]) }) ?? 0 }
        }
        let byUUID = Harness.best(of: 3) {
            for uuid in uuids { sink &+= (try? table.withImage(entityUUID: uuid) { Int($0.bytes[0]) }) ?? 0 }
        }
        let reader = try ImageTableReader(path: table.path)
        let readerByUUID = Harness.best(of: 3) {
            for uuid in uuids { sink &+= (try? reader.withImage(entityUUID: uuid) { Int($0.bytes[0]) }) ?? 0 }
        }
        let allocs = Harness.allocations {
            for uuid in uuids { sink &+= (try? table.withImage(entityUUID: uuid) { Int($0.bytes[0]) }) ?? 0 }
            for key in order { sink &+= (try? reader.withImage(forKey: key) { Int($0.bytes[0]) }) ?? 0 }
        }
        for (name, seconds) in [("lookup by key (writer, counts as use)", byKey), ("lookup by UUID (writer, counts as use)", byUUID),
                                ("lookup by UUID (read-only reader)", readerByUUID)] {
            Harness.report(name, "\(Harness.grouped(Double(count) / seconds))/s", String(format: "%.0f ns per hit", seconds / Double(count) * 1e9))
        }
        Harness.report("allocations per hit", String(format: "%.2f", Double(allocs) / Double(2 * count)), "target 0")
        try flushedWrites(pixels: pixels)
        try scaling()
        if sink == 42 { print("") }  // keeps the reads from being optimised away
    }

    /// The price of durability: flushed single writes and flushed batches of 100.
    static func flushedWrites(pixels: [UInt8]) throws {
        let dir = Harness.scratch("core-flushed")
        let n = 400
        let d = TableFormat(name: "flushed", width: 150, height: 150, style: .bgra32, capacity: n)
        let single = try ImageTableWriter(path: dir + "/single.imagetable", format: d)
        let one = try Harness.time {
            try pixels.withUnsafeBytes { src in
                for i in 0..<n { try single.write(key: "k\(i)", sourceUUID: UUID()) { $0.pixels.copyMemory(from: src) } }
            }
        }
        let batched = try ImageTableWriter(path: dir + "/batched.imagetable", format: d)
        let batch = try Harness.time {
            try pixels.withUnsafeBytes { src in
                for start in stride(from: 0, to: n, by: 100) {
                    let rs = try (start..<start + 100).map { try batched.reserve(key: "k\($0)", sourceUUID: UUID()) }
                    for r in rs { r.pixels.copyMemory(from: src) }
                    try batched.publish(rs)
                }
            }
        }
        let mb = Double(n * pixels.count) / 1e6
        Harness.report("write, flushed one by one", "\(Harness.grouped(mb / one)) MB/s", String(format: "%.2f ms per entry", one / Double(n) * 1e3))
        Harness.report("write, flushed in batches of 100", "\(Harness.grouped(mb / batch)) MB/s", String(format: "%.2f ms per entry", batch / Double(n) * 1e3))
    }

    /// Lookup and eviction cost at 1,000 and 100,000 entries (1×1 grey slots): flat means O(1).
    static func scaling() throws {
        var results: [(Int, Double, Double)] = []
        for capacity in [1_000, 100_000] {
            let dir = Harness.scratch("core-scale-\(capacity)")
            let d = TableFormat(name: "scale", width: 1, height: 1, style: .grayscale8, capacity: capacity)
            let table = try ImageTableWriter(path: dir + "/scale.imagetable", format: d, options: .init(durability: .processCrashOnly))
            let byte: [UInt8] = [7]
            try byte.withUnsafeBytes { b in
                for i in 0..<capacity { _ = try table.write(key: "k\(i)", sourceUUID: UUID(), pixels: b, bytesPerRow: 64) }
            }
            let probes = (0..<10_000).map { _ in EntityKey.uuid(for: "k\(Int.random(in: 0..<capacity))") }
            var sink = 0
            let lookup = Harness.best(of: 3) {
                for p in probes { sink &+= (try? table.withImage(entityUUID: p) { Int($0.bytes[0]) }) ?? 0 }
            }
            // Every write into the full table evicts the least recently used entry.
            let evict = try Harness.time {
                try byte.withUnsafeBytes { b in
                    for i in 0..<10_000 { _ = try table.write(key: "new\(i)", sourceUUID: UUID(), pixels: b, bytesPerRow: 64) }
                }
            }
            results.append((capacity, lookup / 1e4 * 1e9, evict / 1e4 * 1e9))
            if sink == 42 { print("") }
        }
        for (capacity, lookup, evict) in results {
            Harness.report("at \(Harness.grouped(Double(capacity))) entries: lookup / evicting write",
                           String(format: "%.0f / %.0f ns", lookup, evict))
        }
        Harness.report("100,000 vs 1,000 entries", String(format: "%.2f× / %.2f×", results[1].1 / results[0].1, results[1].2 / results[0].2), "1.0 = O(1)")
    }
}

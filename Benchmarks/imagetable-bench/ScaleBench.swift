import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Tables of 1,000, 100,000 and 1,000,000 entries (full, 1×1 `8BitGrayscale`, so a slot is one
/// 4 KiB page): what opening one costs in time and memory, what a hit costs on random keys and
/// on a hot set of 1,000 keys, and what `inspect --no-entries` costs at a million. The 1,000-entry
/// table is the baseline: flat ratios mean costs that do not grow with the entries.
enum ScaleBench {
    static let sizes = [1_000, 100_000, 1_000_000]

    struct Row {
        let entries: Int
        let open: Double
        let residentKiB: Int
        let randomHit: Double
        let hotHit: Double
    }

    static func run(imagetable: String?) throws {
        print("Scale: open and hits at 1,000 / 100,000 / 1,000,000 entries (full tables of 1×1 8BitGrayscale slots)")
        var rows: [Row] = []
        var largest = ""
        for entries in sizes {
            let path = Harness.scratch("scale-\(entries)") + "/scale.imagetable"
            let build = try Harness.time { try fill(path, entries: entries) }
            let measured = try Harness.time { rows.append(try measure(path, entries: entries)) }
            print(String(format: "  built %@ entries in %.1f s, measured in %.1f s", Harness.grouped(Double(entries)), build, measured))
            largest = path
        }
        Harness.report("entries: open / resident after open", "", "hit on random keys / on 1,000 hot keys")
        for r in rows {
            Harness.report("  \(Harness.grouped(Double(r.entries)))",
                           String(format: "%.1f µs / %d KiB", r.open * 1e6, r.residentKiB),
                           String(format: "%.0f ns / %.0f ns", r.randomHit * 1e9, r.hotHit * 1e9))
        }
        let (base, top) = (rows[0], rows[rows.count - 1])
        Harness.report("1,000,000 vs 1,000: open", String(format: "%.2f×", top.open / base.open), "1.0 = O(1)")
        Harness.report("1,000,000 vs 1,000: hit, random keys", String(format: "%.2f×", top.randomHit / base.randomHit),
                       "memory latency: a random key's bucket misses the cache, then its record and slot (fetched together)")
        Harness.report("1,000,000 vs 1,000: hit, 1,000 hot keys", String(format: "%.2f×", top.hotHit / base.hotHit), "the lookup itself")
        if let imagetable { try inspect(imagetable, largest) }
    }

    /// A full table of `entries` entries, written without touching a slot's page: every
    /// reservation is published with the checksum of the zeros its unwritten slot reads as, so
    /// building a million entries costs their index, not 4 GB of pixel writes.
    static func fill(_ path: String, entries: Int) throws {
        let format = TableFormat(name: "scale", width: 1, height: 1, style: .grayscale8, capacity: entries)
        let table = try ImageTableWriter(path: path, format: format, options: .init(durability: .processCrashOnly))
        defer { table.close() }
        let zeros = [UInt8](repeating: 0, count: table.layout.imageBytes).withUnsafeBytes { CRC32.checksum($0) }
        var batch: [SlotReservation] = []
        for i in 0..<entries {
            var r = try table.reserve(key: "k\(i)", sourceUUID: EntityKey.namespace, evicting: .none)
            r.pixelChecksum = zeros
            batch.append(r)
            if batch.count == 4096 || i == entries - 1 {
                try table.publish(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    static func measure(_ path: String, entries: Int) throws -> Row {
        let open = try Harness.best(of: 20) { _ = try ImageTableReader(path: path) }
        let reader = try ImageTableReader(path: path)
        let resident = residentKiB(of: path)
        var rng = SystemRandomNumberGenerator()
        let random = (0..<10_000).map { _ in EntityKey.uuid(for: "k\(Int.random(in: 0..<entries, using: &rng))") }
        let hot = (0..<1_000).map { _ in EntityKey.uuid(for: "k\(Int.random(in: 0..<entries, using: &rng))") }
        var sink = 0
        let randomHit = Harness.best(of: 3) {
            for uuid in random { sink &+= (try? reader.withImage(entityUUID: uuid) { Int($0.bytes[0]) + 1 }) ?? 0 }
        } / Double(random.count)
        let hotHit = Harness.best(of: 3) {
            for _ in 0..<10 { for uuid in hot { sink &+= (try? reader.withImage(entityUUID: uuid) { Int($0.bytes[0]) + 1 }) ?? 0 } }
        } / Double(hot.count * 10)
        guard sink == random.count * 3 + hot.count * 30 else { throw ImageTableError(.corrupt, "a lookup missed") }
        return Row(entries: entries, open: open, residentKiB: resident, randomHit: randomHit, hotHit: hotHit)
    }

    /// `imagetable inspect --no-entries` on the largest table: its time and its peak resident
    /// size, taken by a small Python parent (a child forked from this process would count this
    /// process's pages until it execs).
    static func inspect(_ imagetable: String, _ table: String) throws {
        let script = """
            import resource, subprocess, sys, time
            start = time.monotonic()
            subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
            print(time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, imagetable, "inspect", table, "--no-entries"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let fields = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        guard fields.count == 2, let seconds = Double(fields[0]), let kilobytes = Int(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            print("  inspect --no-entries: could not be measured")
            return
        }
        Harness.report("inspect --no-entries at 1,000,000 entries", String(format: "%.0f ms, %d MB", seconds * 1e3, kilobytes / 1024),
                       "the whole process: start, open, print")
    }

    /// The resident KiB of this process's mappings of `path` (`/proc/self/smaps`).
    static func residentKiB(of path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return 0 }
        var total = 0, inside = false
        for line in String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.first?.isHexDigit == true {
                inside = line.hasSuffix(" " + path)
            } else if inside, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb
            }
        }
        return total
    }
}

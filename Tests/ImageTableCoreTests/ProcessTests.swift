import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Crash safety and cross-process behaviour, with real child processes (`ImageTableFixture`).
/// The fixture fills every entry's image bytes with `fillByte(source)`, so a torn or mixed image
/// shows as bytes that differ.
@Suite(.serialized)
struct ProcessTests {
    static func fixtureDescriptor(capacity: Int) -> TableFormat {
        TableFormat(name: "fixture", family: "tests", width: 24, height: 16, style: .bgra32, capacity: capacity)
    }

    static func fillByte(_ source: UUID) -> UInt8 { source.uuid.0 | 1 }

    /// Starts the fixture with `arguments`; its standard output goes to `output`, else nowhere.
    static func spawn(_ arguments: [String], environment: [String: String]? = nil, output: Pipe? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Products.fixture)
        p.arguments = arguments
        if let environment { p.environment = environment }
        p.standardOutput = output ?? FileHandle.nullDevice
        try p.run()
        return p
    }

    /// What the log says each key may look like now: one of the `committed` sources (`nil`: no
    /// entry), or what an operation in flight would leave.
    ///
    /// `committed` is a set because an operation interrupted in one round may or may not have
    /// reached the table before the kill (a write published but not yet logged as ended), and a
    /// later round's operation on the same key starts from either outcome.
    struct Expectation {
        var committed: Set<UUID?> = [nil]
        var inFlight: (delete: Bool, source: UUID?)?

        /// Starts an operation, folding an interrupted one's possible outcomes into `committed`.
        mutating func begin(delete: Bool, source: UUID?) {
            committed.formUnion(interrupted)
            inFlight = (delete, source)
        }

        /// What an operation in flight may have left: no entry (a write takes the key's slot
        /// before filling it), or the new entry.
        private var interrupted: Set<UUID?> {
            guard let flight = inFlight else { return [] }
            return flight.delete ? [nil] : [nil, flight.source]
        }

        /// Every source the table may hold for the key.
        var allowed: Set<UUID?> { committed.union(interrupted) }
    }

    static func expectations(log: String) -> (keys: [String: Expectation], writes: Int) {
        var keys: [String: Expectation] = [:]
        var writes = 0
        for line in log.split(separator: "\n") {
            let f = line.split(separator: " ").map(String.init)
            guard f.count >= 2, f[0] != "O", f[0] != "R" else { continue }
            var e = keys[f[1]] ?? Expectation()
            switch f[0] {
            case "B": e.begin(delete: false, source: UUID(uuidString: f[2]))
            case "E": e = Expectation(committed: [UUID(uuidString: f[2])], inFlight: nil); writes += 1
            case "D": e.begin(delete: true, source: nil)
            case "d": e = Expectation(committed: [nil], inFlight: nil)
            default: break
            }
            keys[f[1]] = e
        }
        return (keys, writes)
    }

    /// Index rebuilds the children logged (`R n` lines: each child counts from its open).
    static func rebuilds(log: String) -> Int {
        log.split(separator: "\n").filter { $0.hasPrefix("R ") }.count
    }

    /// Runs `rounds` kill-9 rounds of a writer over `keys` keys in a table of `capacity`, checking
    /// the table after every kill. Returns the number of writes the children completed and the
    /// hash index rebuilds they made.
    static func killRounds(_ rounds: Int, capacity: Int, keys: Int, checkLog: Bool) throws -> (writes: Int, rebuilds: Int) {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable"), log = dir.file("log")
        let d = fixtureDescriptor(capacity: capacity)
        var completed = 0, rebuilt = 0
        for round in 0..<rounds {
            let child = try spawn(["kill-writer", path, "\(capacity)", "\(keys)", log])
            usleep(UInt32.random(in: 20_000...90_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            guard FileManager.default.fileExists(atPath: path) else { continue }

            // Before any repair, a reader serves only complete images, and the hash index leads
            // to every committed record, whatever instant the kill hit (a rebuild included).
            let reader = try ImageTableReader(path: path)
            for info in reader.entries() {
                let whole = try reader.withImage(forKey: info.key) { v in v.bytes.allSatisfy { $0 == fillByte(v.sourceUUID) } }
                #expect(whole == true, "round \(round): \(info.key) torn or missed before repair")
            }
            #expect(!reader.notices.contains { $0.kind == .damagedIndex || $0.kind == .damagedRecord }, "round \(round): \(reader.notices)")
            let before = TableVerifier.verify(path: path)
            // A kill leaves interrupted writes and, between a record and the count, a stale count.
            #expect(before.verdict != .damaged, "round \(round): \(before.problems)")
            // A writer opens it cleanly; then every entry verifies and matches the log.
            let table = try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 5))
            let report = TableVerifier.verify(path: path)
            #expect(report.isValid, "round \(round): \(report.problems)")
            #expect(table.count <= capacity)
            var st = stat()
            _ = stat(path, &st)
            #expect(Int(st.st_size) <= table.layout.maxFileBytes)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let (expected, writes) = expectations(log: text)
            completed = writes
            rebuilt = Self.rebuilds(log: text)
            if checkLog {
                for (key, e) in expected {
                    let present = table.entry(forKey: key)?.sourceUUID
                    #expect(e.allowed.contains(present), "round \(round): \(key) is \(String(describing: present)), may be \(e.allowed)")
                }
            }
            table.close()
        }
        return (completed, rebuilt)
    }

    /// FastImageCache published entries before their pixels and could serve torn images after a
    /// kill. Here: 60 kills at random moments, without eviction, so every entry the interrupted
    /// write did not touch must survive exactly.
    @Test func killedWritersLoseNothingTheyDidNotTouch() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["IMAGETABLE_KILL_ROUNDS"] ?? "") ?? 60
        let (writes, _) = try Self.killRounds(rounds, capacity: 64, keys: 48, checkLog: true)
        #expect(writes > rounds, "the children must actually have written between kills")
    }

    /// The same with a full table, so kills also land in the middle of evictions, and in the
    /// middle of hash index rebuilds: 40 keys churning through 6 slots leave stale buckets that
    /// crowd the 16-bucket index every few writes.
    @Test func killedWritersDuringEvictionLeaveValidTables() throws {
        let (writes, rebuilds) = try Self.killRounds(20, capacity: 6, keys: 40, checkLog: false)
        #expect(writes > 20)
        #expect(rebuilds > 0, "the children must have rebuilt the index between kills")
    }

    /// Kills at the two instants of a rebuild that timing rarely hits: the new area written but
    /// not switched to, and switched to with the header not yet flushed. Readers then find every
    /// entry through the index, before any writer repairs anything, and the next writer opens the
    /// table cleanly.
    @Test(arguments: ["index-rebuilt", "index-switched"])
    func aWriterKilledInTheMiddleOfARebuildLosesNothing(point: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable"), log = dir.file("log"), hook = dir.file("hook")
        try writeExecutable("#!/bin/sh\n[ \"$1\" = \"\(point)\" ] && kill -9 $2\nexit 0\n", to: hook)
        for round in 0..<3 {
            let child = try Self.spawn(["kill-writer", path, "6", "40", log], environment: ["IMAGETABLE_TEST_HOOK": hook])
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL, "round \(round)")
            let reader = try ImageTableReader(path: path)
            let entries = reader.entries()
            #expect(!reader.notices.contains { $0.kind == .damagedIndex }, "round \(round): \(reader.notices)")
            for info in entries {
                #expect(try reader.withImage(forKey: info.key) { v in v.bytes.allSatisfy { $0 == Self.fillByte(v.sourceUUID) } } == true)
            }
            #expect(TableVerifier.verify(path: path).verdict != .damaged)
            let writer = try ImageTableWriter(path: path, format: Self.fixtureDescriptor(capacity: 6), options: .init(lockTimeout: 5))
            #expect(writer.entries().map(\.key) == entries.map(\.key), "round \(round): the writer keeps what readers saw")
            writer.close()
            #expect(TableVerifier.verify(path: path).isValid)
        }
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("E ") }.count > 3, "the children wrote before the rebuilds")
    }

    @Test func aReaderInAnotherProcessNeverSeesTornPixels() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let pipe = Pipe()
        // The writer runs until this test has read enough (a loaded machine may give the reader
        // little time), or 60 s at most.
        let writer = try Self.spawn(["rewriter", path, "60"], output: pipe)
        var reader: ImageTableReader?
        while reader == nil && writer.isRunning {
            reader = try? ImageTableReader(path: path)
        }
        var reads = 0, torn = 0
        let started = Date()
        while writer.isRunning, let reader {
            for k in 0..<4 {
                let ok = try? reader.withImage(forKey: "key-\(k)") { v in v.bytes.allSatisfy { $0 == Self.fillByte(v.sourceUUID) } }
                if ok == false { torn += 1 }
                if ok != nil { reads += 1 }
            }
            if reads >= 2000 && Date().timeIntervalSince(started) > 1 {
                _ = FileManager.default.createFile(atPath: path + ".stop", contents: nil)
                break
            }
        }
        writer.waitUntilExit()
        let rewrites = Int(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(torn == 0)
        #expect(reads > 1000 && rewrites > 1000, "reads \(reads), rewrites \(rewrites): the two must overlap a lot")
    }

    /// A writer in another process rebuilds the hash index again and again (deletes leave stale
    /// buckets) while this process looks up an entry the writer never touches: the lookup never
    /// misses, whichever area it probes when the writer switches.
    @Test func aReaderNeverMissesAnEntryWhileTheIndexIsRebuilt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let pipe = Pipe()
        let writer = try Self.spawn(["churner", path, "2"], output: pipe)
        let output = pipe.fileHandleForReading
        #expect(String(decoding: output.readData(ofLength: 6), as: UTF8.self) == "ready\n")
        let reader = try ImageTableReader(path: path)
        var reads = 0, misses = 0
        while writer.isRunning {
            let whole = try reader.withImage(forKey: "stable") { v in v.bytes.allSatisfy { $0 == Self.fillByte(v.sourceUUID) } }
            if whole != true { misses += 1 }
            reads += 1
        }
        writer.waitUntilExit()
        let counts = String(decoding: output.readDataToEndOfFile(), as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(misses == 0, "\(misses) of \(reads) lookups missed")
        #expect(counts.count == 2 && counts[0] > 1000 && counts[1] > 100, "writes and rebuilds: \(counts)")
        #expect(reads > 1000)
    }

    /// Listing a table while another process writes it reports no damage that is not there: a
    /// record read while it changed is a torn read, and an odd generation is a write in
    /// progress while the writer holds its lock. (The listing warned of `damaged-record` and
    /// `discarded-interrupted-write` for writes in progress, which `inspect` and `merge` printed.)
    @Test func listingUnderALiveWriterReportsNoFalseDamage() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("live.imagetable")
        try openTable(path, descriptor(capacity: 4)).close()
        let child = try Self.spawn(["kill-writer", path, "4", "6", dir.file("log")])
        defer {
            kill(child.processIdentifier, SIGKILL)  // the fixture writes until killed
            child.waitUntilExit()
        }
        var listings = 0, falseNotices: [String] = []
        let deadline = Date().addingTimeInterval(1.5)
        while Date() < deadline {
            let reader = try ImageTableReader(path: path)
            _ = reader.entries()
            listings += 1
            falseNotices += reader.notices.filter { $0.kind == .damagedRecord || $0.kind == .discardedInterruptedWrite }.map(\.message)
        }
        #expect(listings > 50)
        #expect(falseNotices.isEmpty, "\(falseNotices.count) notices, first: \(falseNotices.prefix(3))")
    }

    /// A full disk (here: RLIMIT_FSIZE) is a typed error, never SIGBUS, and loses nothing written.
    @Test func aFullDiskIsATypedErrorNotACrash() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("full.imagetable")
        let result = try run(Products.fixture, ["fill-until-full", path, "\(300 * 1024)"])
        let (status, output) = (result.status, result.stdout)
        #expect(status == 0, "the child must not crash")
        #expect(output.hasPrefix("no-space"), "\(output)")
        let written = try #require(output.split(separator: "\n").last.flatMap { $0.hasPrefix("written ") ? Int($0.dropFirst(8)) : nil },
                                   "\(output)")
        #expect(written >= 1)
        let report = TableVerifier.verify(path: path)
        #expect(report.isValid && report.validEntries == written, "\(written) written: \(report.problems)")
        // Each completed write reads back whole, as its fill byte.
        let reader = try ImageTableReader(path: path)
        #expect(reader.count == written)
        for entry in reader.entries() {
            let fill = Self.fillByte(entry.sourceUUID)
            #expect(try reader.withImage(forKey: entry.key) { $0.bytes.allSatisfy { $0 == fill } } == true, "\(entry.key)")
        }
    }
}

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

    static func spawn(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Products.fixture)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// What the log says each key must look like now: committed source, or in flight.
    struct Expectation {
        var committed: UUID?
        var inFlight: (delete: Bool, source: UUID?)?
        /// What earlier operations on the key left if they completed: a writer killed after it
        /// published, before it logged `E` (or `d`), leaves an entry the log never confirms, and
        /// the next writer's operation on the key replaces it as the one in flight.
        var unconfirmed: [UUID?] = []

        /// Records the start of an operation, keeping the outcome of the one it interrupts.
        mutating func begin(delete: Bool, source: UUID?) {
            if let previous = inFlight { unconfirmed.append(previous.delete ? nil : previous.source) }
            inFlight = (delete, source)
        }
    }

    static func expectations(log: String) -> (keys: [String: Expectation], writes: Int) {
        var keys: [String: Expectation] = [:]
        var writes = 0
        for line in log.split(separator: "\n") {
            let f = line.split(separator: " ").map(String.init)
            guard f.count >= 2, f[0] != "O" else { continue }
            var e = keys[f[1]] ?? Expectation()
            switch f[0] {
            case "B": e.begin(delete: false, source: UUID(uuidString: f[2]))
            case "E": e = Expectation(committed: UUID(uuidString: f[2]), inFlight: nil); writes += 1
            case "D": e.begin(delete: true, source: nil)
            case "d": e = Expectation(committed: nil, inFlight: nil)
            default: break
            }
            keys[f[1]] = e
        }
        return (keys, writes)
    }

    /// Runs `rounds` kill-9 rounds of a writer over `keys` keys in a table of `capacity`, checking
    /// the table after every kill. Returns the number of writes the children completed.
    static func killRounds(_ rounds: Int, capacity: Int, keys: Int, checkLog: Bool) throws -> Int {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable"), log = dir.file("log")
        let d = fixtureDescriptor(capacity: capacity)
        var completed = 0
        for round in 0..<rounds {
            let child = try spawn(["kill-writer", path, "\(capacity)", "\(keys)", log])
            usleep(UInt32.random(in: 20_000...90_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            guard FileManager.default.fileExists(atPath: path) else { continue }

            // Before any repair, a reader serves only complete images.
            let reader = try ImageTableReader(path: path)
            for info in reader.entries() {
                let whole = try reader.withImage(forKey: info.key) { v in v.bytes.allSatisfy { $0 == fillByte(v.sourceUUID) } }
                #expect(whole != false, "round \(round): \(info.key) torn before repair")
            }
            // A writer opens it cleanly; then every entry verifies and matches the log.
            let table = try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 5))
            let report = TableVerifier.verify(path: path)
            #expect(report.isValid, "round \(round): \(report.problems)")
            #expect(table.count <= capacity)
            var st = stat()
            _ = stat(path, &st)
            #expect(Int(st.st_size) <= table.layout.maxFileBytes)
            let (expected, writes) = expectations(log: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
            completed = writes
            if checkLog {
                for (key, e) in expected {
                    let present = table.entry(forKey: key)?.sourceUUID
                    if let flight = e.inFlight {
                        let allowed: [UUID?] = [nil, e.committed] + (flight.delete ? [] : [flight.source]) + e.unconfirmed
                        #expect(allowed.contains(present), "round \(round): \(key) in flight is \(String(describing: present))")
                    } else {
                        #expect(present == e.committed, "round \(round): \(key) should be \(String(describing: e.committed))")
                    }
                }
            }
            table.close()
        }
        return completed
    }

    /// FastImageCache published entries before their pixels and could serve torn images after a
    /// kill. Here: 60 kills at random moments, without eviction, so every entry the interrupted
    /// write did not touch must survive exactly.
    @Test func killedWritersLoseNothingTheyDidNotTouch() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["IMAGETABLE_KILL_ROUNDS"] ?? "") ?? 60
        let writes = try Self.killRounds(rounds, capacity: 64, keys: 48, checkLog: true)
        #expect(writes > rounds, "the children must actually have written between kills")
    }

    /// The same with a full table, so kills also land in the middle of evictions.
    @Test func killedWritersDuringEvictionLeaveValidTables() throws {
        let writes = try Self.killRounds(20, capacity: 6, keys: 40, checkLog: false)
        #expect(writes > 20)
    }

    @Test func aReaderInAnotherProcessNeverSeesTornPixels() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let pipe = Pipe()
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: Products.fixture)
        writer.arguments = ["rewriter", path, "2"]
        writer.standardOutput = pipe
        try writer.run()
        var reader: ImageTableReader?
        while reader == nil && writer.isRunning {
            reader = try? ImageTableReader(path: path)
        }
        var reads = 0, torn = 0
        while writer.isRunning, let reader {
            for k in 0..<4 {
                let ok = try? reader.withImage(forKey: "key-\(k)") { v in v.bytes.allSatisfy { $0 == Self.fillByte(v.sourceUUID) } }
                if ok == false { torn += 1 }
                if ok != nil { reads += 1 }
            }
        }
        writer.waitUntilExit()
        let rewrites = Int(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(torn == 0)
        #expect(reads > 1000 && rewrites > 1000, "reads \(reads), rewrites \(rewrites): the two must overlap a lot")
    }

    /// A full disk (here: RLIMIT_FSIZE) is a typed error, never SIGBUS, and loses nothing written.
    @Test func aFullDiskIsATypedErrorNotACrash() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("full.imagetable")
        let result = try run(Products.fixture, ["fill-until-full", path, "\(300 * 1024)"])
        let (status, output) = (result.status, result.stdout)
        #expect(status == 0, "the child must not crash")
        #expect(output.hasPrefix("no-space"), "\(output)")
        let report = TableVerifier.verify(path: path)
        #expect(report.isValid && report.validEntries >= 1, "\(report.problems)")
    }
}

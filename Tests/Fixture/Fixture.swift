import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Child processes for the core's multi-process tests. Not a product: tests start it by path.
///
///     ImageTableFixture kill-writer TABLE CAPACITY KEYS LOG   write until killed, logging intents
///     ImageTableFixture rewriter TABLE SECONDS                rewrite entries with uniform fills
///     ImageTableFixture churner TABLE SECONDS                 keep `stable`, churn other keys (index rebuilds)
///     ImageTableFixture hold-lock TABLE SECONDS               hold the writer lock, then exit
///     ImageTableFixture fill-until-full TABLE LIMIT_BYTES     write under RLIMIT_FSIZE until it fails; print the error, then `written N`
///     ImageTableFixture create-with-umask TABLE MASK MODE     create a table under an umask (octal)
///
/// Every entry it writes has all image bytes equal to ``fillByte(for:)`` of its source UUID, so a
/// test can tell a complete entry from a torn or mixed one without sharing code with this file.
@main
struct Fixture {
    /// The descriptor every fixture table uses: 24×16 `32BitBGRA`, 1,536 image bytes a slot.
    static func descriptor(capacity: Int) -> TableFormat {
        TableFormat(name: "fixture", family: "tests", width: 24, height: 16, style: .bgra32, capacity: capacity)
    }

    /// The byte a source UUID's entry is filled with; never zero, so an unwritten slot differs.
    static func fillByte(for source: UUID) -> UInt8 { source.uuid.0 | 1 }

    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 4 else { fail("usage: ImageTableFixture COMMAND TABLE ARGS…") }
        switch args[1] {
        case "kill-writer": try killWriter(table: args[2], capacity: Int(args[3])!, keys: Int(args[4])!, log: args[5])
        case "rewriter": try rewriter(table: args[2], seconds: Double(args[3])!)
        case "churner": try churner(table: args[2], seconds: Double(args[3])!)
        case "hold-lock": try holdLock(table: args[2], seconds: Double(args[3])!)
        case "fill-until-full": fillUntilFull(table: args[2], limit: Int(args[3])!)
        case "create-with-umask": try createWithUmask(table: args[2], mask: args[3], protection: args[4])
        default: fail("unknown command \(args[1])")
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }

    /// Unbuffered, so that a SIGKILL cannot lose a line that was logged before an operation began.
    static func log(_ fd: Int32, _ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    static func write(_ table: ImageTableWriter, key: String, source: UUID) throws {
        let fill = fillByte(for: source)
        try table.write(key: key, sourceUUID: source) { r in
            r.pixels.initializeMemory(as: UInt8.self, repeating: fill)
        }
    }

    /// Writes and deletes random keys forever. Logs `B key src` before and `E key src` after each
    /// write, `D key` before and `d key` after each delete, and `R n` when the hash index has
    /// been rebuilt `n` times by this process.
    static func killWriter(table path: String, capacity: Int, keys: Int, log logPath: String) throws {
        let logFD = open(logPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        let table = try ImageTableWriter(path: path, format: descriptor(capacity: capacity))
        log(logFD, "O \(table.count)")
        var rebuilds = table.indexRebuilds
        while true {
            if table.indexRebuilds != rebuilds {
                rebuilds = table.indexRebuilds
                log(logFD, "R \(rebuilds)")
            }
            let key = "key-\(Int.random(in: 0..<keys))"
            if Int.random(in: 0..<10) == 0 {
                log(logFD, "D \(key)")
                try table.delete(key: key)
                log(logFD, "d \(key)")
            } else {
                let source = UUID()
                log(logFD, "B \(key) \(source.uuidString)")
                try write(table, key: key, source: source)
                log(logFD, "E \(key) \(source.uuidString)")
            }
        }
    }

    static func rewriter(table path: String, seconds: Double) throws {
        let table = try ImageTableWriter(path: path, format: descriptor(capacity: 8), options: .init(durability: .processCrashOnly))
        let end = Date().addingTimeInterval(seconds)
        var n = 0
        // Until the time is up, or until the test, having read enough, creates `TABLE.stop`.
        while Date() < end && (n % 256 != 0 || access(path + ".stop", F_OK) != 0) {
            try write(table, key: "key-\(n % 4)", source: UUID())
            n += 1
        }
        print(n)
    }

    /// Writes `stable` once, then writes new keys and deletes old ones for `seconds`, never more
    /// than six at a time in a table of eight: `stable` is never touched, while the stale buckets
    /// the deletes leave make the writer rebuild its hash index again and again. Prints the
    /// writes and the rebuilds.
    static func churner(table path: String, seconds: Double) throws {
        let table = try ImageTableWriter(path: path, format: descriptor(capacity: 8), options: .init(durability: .processCrashOnly))
        try write(table, key: "stable", source: UUID())
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let end = Date().addingTimeInterval(seconds)
        var n = 0
        while Date() < end {
            try write(table, key: "churn-\(n)", source: UUID())
            if n >= 6 { try table.delete(key: "churn-\(n - 6)") }
            n += 1
        }
        print("\(n) \(table.indexRebuilds)")
    }

    static func holdLock(table path: String, seconds: Double) throws {
        let table = try ImageTableWriter(path: path, format: descriptor(capacity: 8))
        FileHandle.standardOutput.write(Data("locked\n".utf8))
        usleep(UInt32(seconds * 1_000_000))
        table.close()
    }

    /// Creates a table with protection `protection` while the umask is `mask`: the umask is
    /// process-wide, so tests change it here rather than under their parallel neighbours.
    static func createWithUmask(table path: String, mask: String, protection: String) throws {
        umask(mode_t(mask, radix: 8)!)
        guard let mode = ProtectionMode(rawValue: protection) else { fail("unknown protection \(protection)") }
        var d = descriptor(capacity: 2)
        d.protection = mode
        try ImageTableWriter(path: path, format: d).close()
    }

    /// Prints `no-space N` (N entries written first) when the typed error arrives; any crash or
    /// other error fails the test.
    static func fillUntilFull(table path: String, limit: Int) {
        signal(SIGXFSZ, SIG_IGN)
        var rl = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rl)
        // How many writes completed, printed after the error: each must survive.
        var n = 0
        do {
            let table = try ImageTableWriter(path: path, format: TableFormat(
                name: "full", width: 64, height: 64, style: .bgra32, capacity: 1000))
            while true {
                try write(table, key: "key-\(n)", source: UUID())
                n += 1
            }
        } catch let error as ImageTableError {
            print("\(error.code.rawValue) \(error.message)")
        } catch {
            print("other \(error)")
        }
        print("written \(n)")
    }
}

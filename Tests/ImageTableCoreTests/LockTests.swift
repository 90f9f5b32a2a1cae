import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct LockTests {
    @Test func aSecondWriterWaitsThenFailsNamingTheLockFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let first = try openTable(path, descriptor())
        let error = #expect(throws: ImageTableError.self) {
            try ImageTableWriter(path: path, format: descriptor(), options: .init(lockTimeout: 0.2))
        }
        #expect(error?.code == .locked)
        // The lock file by its name, beside the table the error's path names.
        #expect(error?.path == path && error?.message.contains("(lock file t.imagetable.lock); gave up after 0.2 s") == true,
                "\(String(describing: error))")
        #expect(error?.message.contains("process \(getpid())") == true)
        first.close()
        // Released: the next writer gets in at once.
        #expect(try openTable(path, descriptor()).count == 0)
    }

    /// Starts a fixture that takes the writer lock of `path` and holds it for `seconds`; returns
    /// once it holds it.
    static func startHolder(_ path: String, seconds: Double) throws -> Process {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: Products.fixture)
        holder.arguments = ["hold-lock", path, "\(seconds)"]
        let pipe = Pipe()
        holder.standardOutput = pipe
        try holder.run()
        _ = pipe.fileHandleForReading.availableData  // "locked"
        return holder
    }

    @Test func aWriterInAnotherProcessHoldsTheLockUntilItExits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let holder = try Self.startHolder(path, seconds: 1.5)
        let d = ProcessTests.fixtureDescriptor(capacity: 8)
        let error = #expect(throws: ImageTableError.self) { try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 0.1)) }
        #expect(error?.message.contains("process \(holder.processIdentifier)") == true)
        // Waiting long enough succeeds once the holder exits.
        let table = try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 10))
        #expect(table.count == 0)
        holder.waitUntilExit()
    }

    @Test func killingTheHolderReleasesTheLock() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let holder = try Self.startHolder(path, seconds: 60)
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let d = ProcessTests.fixtureDescriptor(capacity: 8)
        #expect(try ImageTableWriter(path: path, format: d, options: .init(lockTimeout: 1)).count == 0)
    }
}

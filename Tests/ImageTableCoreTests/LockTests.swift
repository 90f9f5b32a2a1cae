import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct LockTests {
    @Test func aSecondWriterWaitsThenFailsNamingTheLockFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let first = try openTable(path, descriptor())
        let error = #expect(throws: TableError.self) {
            try ImageTable(path: path, descriptor: descriptor(), options: .init(lockTimeout: 0.2))
        }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("\(path).lock") == true)
        #expect(error?.message.contains("process \(getpid())") == true)
        first.close()
        // Released: the next writer gets in at once.
        #expect(try openTable(path, descriptor()).count == 0)
    }

    @Test func aWriterInAnotherProcessHoldsTheLockUntilItExits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: Products.fixture)
        holder.arguments = ["hold-lock", path, "1.5"]
        let pipe = Pipe()
        holder.standardOutput = pipe
        try holder.run()
        _ = pipe.fileHandleForReading.availableData  // "locked"
        let fixtureDescriptor = FormatDescriptor(name: "fixture", family: "tests", width: 24, height: 16, style: .bgra32, capacity: 8)
        let error = #expect(throws: TableError.self) {
            try ImageTable(path: path, descriptor: fixtureDescriptor, options: .init(lockTimeout: 0.1))
        }
        #expect(error?.message.contains("process \(holder.processIdentifier)") == true)
        // Waiting long enough succeeds once the holder exits.
        let table = try ImageTable(path: path, descriptor: fixtureDescriptor, options: .init(lockTimeout: 10))
        #expect(table.count == 0)
        holder.waitUntilExit()
    }

    @Test func killingTheHolderReleasesTheLock() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: Products.fixture)
        holder.arguments = ["hold-lock", path, "60"]
        let pipe = Pipe()
        holder.standardOutput = pipe
        try holder.run()
        _ = pipe.fileHandleForReading.availableData
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let d = FormatDescriptor(name: "fixture", family: "tests", width: 24, height: 16, style: .bgra32, capacity: 8)
        #expect(try ImageTable(path: path, descriptor: d, options: .init(lockTimeout: 1)).count == 0)
    }
}

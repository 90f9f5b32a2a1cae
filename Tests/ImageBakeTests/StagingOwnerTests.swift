import Foundation
@testable import ImageBake
import TestSupport
import Testing
import WorkerProtocol
#if canImport(Glibc)
import Glibc
#endif

/// A staging directory that `merge` or `export` left is deleted by the next run once its process
/// is gone, and only then. Its PID alone did not tell: a killed run its parent had not reaped
/// (a zombie) and a process given its PID since both answered `kill(pid, 0)`, and kept it, as
/// large as a whole set of tables, past every later run (from a review's kill soak).
@Suite struct StagingOwnerTests {
    /// Starts `/bin/true` and never reaps it: a zombie once it has exited.
    static func zombie() throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, argv, nil) == 0)
        for _ in 0..<200 where ProcessStat(pid: pid)?.state != "Z" { usleep(10_000) }
        return pid
    }

    @Test func aDirectoryIsKeptWhileItsProcessRunsAndOnlyThen() throws {
        let me = getpid(), started = try #require(ProcessStat(pid: me)).startTicks
        #expect(StagingOwner.current == "\(me)-\(started)")
        #expect(StagingOwner.mayBeWriting("\(me)-\(started)-42"), "a live process")
        #expect(StagingOwner.mayBeWriting("\(me)-\(started)-42.old"), "its old set, renamed aside")
        #expect(!StagingOwner.mayBeWriting("\(me)-\(started + 1)-42"), "another process that had this PID")
        #expect(StagingOwner.mayBeWriting("\(me)-42"), "an older build's name: the PID alone")
        #expect(StagingOwner.mayBeWriting("\(me)-0-42"), "a start the system did not say")
        #expect(StagingOwner.mayBeWriting("x-1-2") && StagingOwner.mayBeWriting(""), "nothing says whose: kept")
        let zombie = try Self.zombie()
        defer { var status: Int32 = 0; waitpid(zombie, &status, 0) }
        let zombieStart = try #require(ProcessStat(pid: zombie)).startTicks
        #expect(kill(zombie, 0) == 0, "a zombie answers kill(pid, 0)")
        #expect(!StagingOwner.mayBeWriting("\(zombie)-\(zombieStart)-7"))
        #expect(!StagingOwner.mayBeWriting("\(zombie)-7"))
    }

    /// Through `merge`: the leftover of a zombie and of a reused PID go, a live run's stays.
    @Test func mergeDeletesWhatGoneRunsLeft() throws {
        let project = try MergeTests.shardedProject(sources: 4, shards: 2)
        let shards = (0..<2).map { project.root + "/shard-\($0)" }
        let out = project.root + "/out"
        let zombie = try Self.zombie()
        defer { var status: Int32 = 0; waitpid(zombie, &status, 0) }
        let me = getpid(), started = try #require(ProcessStat(pid: me)).startTicks
        let zombieStart = try #require(ProcessStat(pid: zombie)).startTicks
        let names = [".out.merge-\(zombie)-\(zombieStart)-1", ".out.merge-\(me)-\(started + 1)-2", ".out.merge-\(me)-\(started)-3"]
        for name in names { try FileManager.default.createDirectory(atPath: project.root + "/" + name, withIntermediateDirectories: false) }
        #expect(try MergeTests.merge(out, shards).status == 0)
        #expect(MergeCrashTests.leftovers(of: out) == [names[2]], "\(MergeCrashTests.leftovers(of: out))")
    }
}

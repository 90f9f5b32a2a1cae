import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts worker processes with exactly the descriptors of ``WorkerDescriptors``, and nothing
/// else of ours.
///
/// Every descriptor this module creates is close-on-exec from the moment it exists (creation and
/// marking happen under one lock that spawning also takes), so a worker never inherits another
/// worker's pipes: if it did, that other worker would not see end of file when its command
/// closes its requests.
enum WorkerSpawn {
    /// A started process and our ends of its pipes.
    struct Started {
        let pid: pid_t
        /// We write requests here.
        let requests: Int32
        /// We read replies here.
        let replies: Int32
    }

    private static let lock = Mutex(())
    /// The write end of the lifeline every worker of this process holds the read end of; never
    /// closed, so it closes when this process ends.
    nonisolated(unsafe) private static var lifelineRead: Int32 = -1

    /// Starts `executable` with requests on fd 3, replies on fd 4, the lifeline on fd 5 and, when
    /// given, `scratch` on fd 6; standard input is `/dev/null`.
    ///
    /// - Parameters:
    ///   - executable: the worker's path.
    ///   - scratch: a descriptor to pass as fd 6, or `nil`.
    ///   - outputToStandardError: whether the worker's standard output goes to our standard
    ///     error (bakes, whose standard output may carry a JSON document) or is shared.
    ///   - arguments: the worker's arguments after its path.
    /// - Returns: the process and our ends of its channel.
    /// - Throws: the `errno` of the failed call, with its name.
    static func start(_ executable: String, scratch: Int32?, outputToStandardError: Bool,
                      arguments: [String] = []) throws(SpawnFailure) -> Started {
        try lock.withLock { _ throws(SpawnFailure) in
            if lifelineRead < 0 {
                let ends = try pipe("the lifeline pipe")
                lifelineRead = ends.read
                // The write end stays open, unused, for the life of this process.
            }
            let requests = try pipe("the request pipe")
            let replies: (read: Int32, write: Int32)
            do throws(SpawnFailure) { replies = try pipe("the reply pipe") } catch {
                close(requests.read)
                close(requests.write)
                throw error
            }
            defer {
                close(requests.read)
                close(replies.write)
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            if outputToStandardError { posix_spawn_file_actions_adddup2(&actions, 2, 1) }
            // dup2 onto the fixed numbers clears close-on-exec on the copies only.
            posix_spawn_file_actions_adddup2(&actions, requests.read, WorkerDescriptors.requests)
            posix_spawn_file_actions_adddup2(&actions, replies.write, WorkerDescriptors.replies)
            posix_spawn_file_actions_adddup2(&actions, lifelineRead, WorkerDescriptors.lifeline)
            // A scratch descriptor among the fixed numbers would be overwritten by the dup2s above.
            var scratchCopy: Int32 = -1
            defer { if scratchCopy >= 0 { close(scratchCopy) } }
            if let scratch {
                scratchCopy = scratch < Self.firstFree ? fcntl(scratch, F_DUPFD_CLOEXEC, Self.firstFree) : -1
                posix_spawn_file_actions_adddup2(&actions, scratchCopy >= 0 ? scratchCopy : scratch, WorkerDescriptors.scratch)
            }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            // A command may ignore SIGPIPE (a bake must survive a dying worker); its worker gets
            // the defaults back, and a signal mask with only SIGINT and SIGTERM blocked: the
            // worker ignores them once it runs (its command decides what they mean), and until
            // then a Ctrl-C killed it while it started ("worker-unavailable", not "interrupted").
            var defaults = sigset_t()
            sigemptyset(&defaults)
            sigaddset(&defaults, SIGPIPE)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var mask = sigset_t()
            sigemptyset(&mask)
            sigaddset(&mask, SIGINT)
            sigaddset(&mask, SIGTERM)
            posix_spawnattr_setsigmask(&attributes, &mask)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
            guard status == 0 else {
                close(requests.write)
                close(replies.read)
                throw SpawnFailure(call: "posix_spawn", errno: status)
            }
            return Started(pid: pid, requests: requests.write, replies: replies.read)
        }
    }

    /// The lowest descriptor our pipe ends may have: above the fixed numbers a worker gets
    /// (3 to 6). A process whose first descriptors are these pipes (`imagetable extract` opens
    /// nothing before it) would otherwise have the lifeline's read end at 3, and the dup2 of
    /// the requests onto 3 would replace it before it is itself copied to 5: the worker's
    /// "lifeline" was then its request pipe, and the thread watching it took the first byte of
    /// a request and exited.
    static let firstFree: Int32 = 10

    /// A pipe whose two ends are close-on-exec and numbered from ``firstFree`` up.
    private static func pipe(_ what: String) throws(SpawnFailure) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        #if canImport(Glibc)
        guard Glibc.pipe(&ends) == 0 else { throw SpawnFailure(call: "pipe (\(what))", errno: errno) }
        #else
        guard Darwin.pipe(&ends) == 0 else { throw SpawnFailure(call: "pipe (\(what))", errno: errno) }
        #endif
        for i in ends.indices {
            let moved = fcntl(ends[i], F_DUPFD_CLOEXEC, firstFree)
            guard moved >= 0 else {
                let e = errno
                ends.forEach { close($0) }
                throw SpawnFailure(call: "fcntl (\(what))", errno: e)
            }
            close(ends[i])
            ends[i] = moved
        }
        return (ends[0], ends[1])
    }
}

/// A system call that failed while starting a worker.
struct SpawnFailure: Error {
    let call: String
    let errno: Int32

    var reason: String { String(cString: strerror(errno)) }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running worker process, from the command's side: started, greeted, then sent requests, each
/// answered in the order sent. Used from one thread at a time.
///
/// ``send(_:timeout:)`` asks and waits; ``submit(_:)`` and ``receive(_:timeout:)`` let a caller
/// queue the next request while the worker is busy with the current one, so the worker never
/// waits for its caller between two jobs.
///
/// A worker that dies, hangs past a timeout, or answers something that is not the reply to the
/// request it was sent is stopped and reported as lost; the caller starts another if it wants.
public final class WorkerConnection {
    /// The worker's executable.
    public let executable: String
    /// The worker's process id.
    public let pid: Int32
    /// What the worker said of itself in the handshake.
    public private(set) var peer: Hello?
    private var requests: Int32
    private let replies: Int32
    private let lines: LineReader
    /// The request pipe's buffer: what can be written while the worker reads nothing.
    public let pipeBytes: Int
    private var nextID = 1
    private var exited = false
    /// The CPU time (user and system) the worker used in its whole life, in seconds, once it has
    /// been reaped; 0 before.
    public private(set) var cpuSeconds: Double = 0
    /// The CPU time it had used at its handshake (its start-up: loading libraries), or at the
    /// last ``markCPU()``, where the system says (Linux: `/proc/PID/stat`); `nil` elsewhere.
    public private(set) var cpuSecondsAtMark: Double?

    /// The CPU time the worker spent after its handshake or last ``markCPU()``, once it has been
    /// reaped: a worker stopped at a timeout that spent much of it on the CPU was decoding (the
    /// source's cost); one that spent next to nothing was waiting (a file system that does not
    /// answer). `nil` where the start-up's share is not known.
    public var cpuSecondsSinceMark: Double? {
        guard exited, let start = cpuSecondsAtMark else { return nil }
        return max(0, cpuSeconds - start)
    }

    /// Takes the worker's CPU time now as the start of ``cpuSecondsSinceMark``: after a reply, so
    /// that the time of the jobs it answered does not count (a read of `/proc`, some
    /// microseconds: for callers that need it, not after every reply).
    public func markCPU() {
        guard !exited, cpuSecondsAtMark != nil else { return }
        cpuSecondsAtMark = Self.cpuSeconds(of: pid) ?? cpuSecondsAtMark
    }
    /// How the worker ended, once known: asked again, it is the same answer (the process is
    /// reaped once).
    private var ended: Loss?
    /// Bytes of requests sent and not yet answered.
    private var outstandingBytes = 0

    /// Starts a worker and completes the handshake.
    ///
    /// - Parameters:
    ///   - executable: the worker's path.
    ///   - hello: this side's greeting (its versions and executable).
    ///   - scratch: a descriptor to share as the worker's scratch memory, or `nil`.
    ///   - outputToStandardError: send the worker's standard output to our standard error.
    ///   - handshakeTimeout: seconds to wait for the worker's greeting.
    ///   - arguments: the worker's command-line arguments (``WorkerArguments``).
    /// - Throws: ``StartFailure``.
    public init(executable: String, hello: Hello, scratch: Int32? = nil, outputToStandardError: Bool,
                handshakeTimeout: Double = 30, arguments: [String] = []) throws(StartFailure) {
        self.executable = executable
        // A worker that dies mid-write must give us EPIPE, not kill the command.
        signal(SIGPIPE, SIG_IGN)
        guard access(executable, X_OK) == 0 else {
            throw .cannotRun(executable: executable, reason: String(cString: strerror(errno)))
        }
        let started: WorkerSpawn.Started
        do {
            started = try WorkerSpawn.start(executable, scratch: scratch, outputToStandardError: outputToStandardError, arguments: arguments)
        } catch {
            throw .cannotRun(executable: executable, reason: "\(error.call) failed: \(error.reason)")
        }
        pid = started.pid
        requests = started.requests
        pipeBytes = Self.pipeBytes(started.requests)
        replies = started.replies
        lines = LineReader(fd: started.replies)
        switch send(.hello(hello), timeout: handshakeTimeout) {
        case .success(.hello(let theirs)) where theirs.protocolVersion == hello.protocolVersion
            && theirs.renderingVersion == hello.renderingVersion:
            peer = theirs
            cpuSecondsAtMark = Self.cpuSeconds(of: pid)
        case .success(.hello(let theirs)):
            stop()
            throw .mismatch(ours: hello, theirs: theirs)
        case .success(let other):
            stop()
            throw .noHandshake(executable: executable, .brokeProtocol("it answered the handshake with \(other)"))
        case .failure(let loss):
            throw .noHandshake(executable: executable, loss)
        }
    }

    deinit {
        if !exited { finish() }
        close(replies)
    }

    /// Sends a request and waits for its reply. Only for a connection with nothing outstanding.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: seconds to wait, or `nil` to wait as long as it takes.
    /// - Returns: the reply, or why the worker is lost (it has then been stopped).
    public func send(_ request: WorkerRequest, timeout: Double?) -> Result<WorkerReply, Loss> {
        switch submit(request) {
        case .sent(let submitted): receive(submitted, timeout: timeout)
        case .lost(let loss): .failure(loss)
        case .noRoom: .failure(lose(.brokeProtocol("send() was called with requests outstanding")))
        }
    }

    /// A request sent and not yet answered.
    public struct Submitted: Sendable, Equatable {
        /// The request's identifier, which its reply carries.
        public let id: Int
        /// The bytes it took in the pipe.
        public let bytes: Int
    }

    /// What ``submit(_:)`` did.
    public enum Submission: Sendable, Equatable {
        /// Sent; take its reply with ``receive(_:timeout:)``.
        case sent(Submitted)
        /// Not sent: with the requests outstanding, it might not fit in the pipe, and a write
        /// that waited would wait on a worker that may never read again (one stuck on a source
        /// until its timeout, which only a caller that is not writing can notice). Take a reply
        /// first.
        case noRoom
        /// Not sent: the worker is gone (it closed its end: it exited).
        case lost(Loss)
    }

    /// Sends a request without waiting for its reply.
    ///
    /// Replies come in the order requests were sent; take each with ``receive(_:timeout:)``, in
    /// that order. Requests wait in the pipe while the worker works, as long as what is
    /// outstanding stays within half the pipe's buffer (``pipeBytes``); past that, the request is
    /// not sent. With nothing outstanding it is always sent (the worker is reading).
    ///
    /// - Parameter request: the request.
    /// - Returns: whether it was sent.
    public func submit(_ request: WorkerRequest) -> Submission {
        let line = WireCodec.line(request, id: nextID)
        if outstandingBytes > 0 && outstandingBytes + line.count > pipeBytes / 2 { return .noRoom }
        nextID += 1
        guard !exited, DescriptorWriter.writeAll(requests, line) else { return .lost(death()) }
        outstandingBytes += line.count
        return .sent(Submitted(id: nextID - 1, bytes: line.count))
    }

    /// The size of a pipe's buffer: what can be written to `fd` while its reader reads nothing.
    private static func pipeBytes(_ fd: Int32) -> Int {
        #if os(Linux)
        let size = fcntl(fd, 1032 /* F_GETPIPE_SZ */)
        return size > 0 ? Int(size) : 4096
        #else
        return 8192  // Darwin starts pipes at 16 KiB and grows them only for large writes
        #endif
    }

    /// Waits for the reply to `submitted`, the oldest request not yet answered.
    ///
    /// - Parameters:
    ///   - submitted: the handle ``submit(_:)`` returned.
    ///   - timeout: seconds to wait from now, or `nil` to wait as long as it takes.
    /// - Returns: the reply, or why the worker is lost (it has then been stopped).
    public func receive(_ submitted: Submitted, timeout: Double?) -> Result<WorkerReply, Loss> {
        outstandingBytes = max(0, outstandingBytes - submitted.bytes)
        // A worker that exited may have answered before it did (its reply is still in the pipe);
        // one that was stopped has nothing more to say.
        switch ended {
        case .timedOut?, .brokeProtocol?: return .failure(ended!)
        case .died?, nil: break
        }
        switch lines.next(timeout: timeout) {
        case .line(let line):
            guard let (replyID, reply) = WireCodec.reply(line) else {
                stop()
                return .failure(lose(.brokeProtocol("an unreadable reply (\(line.count) bytes)")))
            }
            guard replyID == submitted.id else {
                stop()
                return .failure(lose(.brokeProtocol("the reply to request \(replyID) came for request \(submitted.id)")))
            }
            return .success(reply)
        case .end:
            return .failure(death())
        case .timedOut:
            stop()
            return .failure(lose(.timedOut(seconds: timeout ?? 0)))
        }
    }

    /// Records why the worker is lost, so that every later call says the same.
    private func lose(_ loss: Loss) -> Loss {
        ended = ended ?? loss
        return loss
    }

    /// Closes the worker's requests, which ends it, and waits for it to exit; a worker still
    /// running after `grace` seconds (one that does not notice, or whose request pipe another
    /// process inherited) is killed.
    ///
    /// - Parameter grace: seconds to wait before killing it.
    public func finish(grace: Double = 10) {
        guard !exited else { return }
        close(requests)
        requests = -1
        let deadline = Date().addingTimeInterval(grace)
        var raw: Int32 = 0
        var usage = rusage()
        while Date() < deadline {
            let reaped = wait4(pid, &raw, WNOHANG, &usage)
            if reaped == pid || (reaped < 0 && errno != EINTR) {
                exited = true
                if reaped == pid { cpuSeconds = Self.seconds(usage) }
                return
            }
            usleep(1000)
        }
        stop()
    }

    /// Kills the worker and waits for it.
    public func stop() {
        guard !exited else { return }
        kill(pid, SIGKILL)
        if requests >= 0 {
            close(requests)
            requests = -1
        }
        _ = wait()
    }

    /// The worker's end, once its channel closed: waits for it to exit and says how.
    private func death() -> Loss {
        if let ended { return ended }
        if requests >= 0 {
            close(requests)
            requests = -1
        }
        let (status, signal) = wait()
        return lose(.died(status: status, signal: signal))
    }

    /// A live process's CPU time (user and system) from `/proc/PID/stat`, on Linux.
    private static func cpuSeconds(of pid: Int32) -> Double? { ProcessStat(pid: pid)?.cpuSeconds }

    private static func seconds(_ usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Reaps the process: its exit status, or the signal that killed it.
    private func wait() -> (status: Int32, signal: Int32?) {
        exited = true
        var raw: Int32 = 0
        var usage = rusage()
        var reaped: Int32
        repeat { reaped = wait4(pid, &raw, 0, &usage) } while reaped < 0 && errno == EINTR
        if reaped == pid { cpuSeconds = Self.seconds(usage) }
        let signal = raw & 0x7F
        return signal == 0 ? ((raw >> 8) & 0xFF, nil) : (0, signal)
    }
}

import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One worker process (`imagetable bake-worker`) and the pipes to it, driven by one thread of
/// the bake.
///
/// A job that does not come back within the timeout, or a worker that dies (a decoder crash on a
/// hostile file), becomes a failure of that source; the caller then starts a new worker.
final class WorkerProcess {
    enum Outcome {
        case reply(WorkerProtocol.Reply)
        /// The worker died or hung; it has been killed and must be replaced.
        case lost(WorkerProtocol.Failure)
    }

    private let process = Process()
    /// The pipes' file handles own the descriptors: closing them any other way would close them
    /// twice, and the second close could hit a descriptor another thread has just opened.
    private let input = Pipe()
    private let output = Pipe()
    private let lines: LineReader

    /// Starts a worker.
    ///
    /// - Parameter command: the executable and its arguments.
    /// - Throws: ``ImageTableError`` `worker-unavailable` when it cannot be started.
    init(command: [String]) throws {
        // A worker that dies mid-write must give us EPIPE, not kill the bake.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw ImageTableError(.workerUnavailable, "cannot start the worker process: \(error)", path: command[0])
        }
        lines = LineReader(fd: output.fileHandleForReading.fileDescriptor)
    }

    /// Sends a request and waits for its reply.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: seconds to wait before declaring the worker hung.
    func send(_ request: WorkerProtocol.Request, timeout: Double) -> Outcome {
        guard let line = try? WorkerProtocol.encodeLine(request),
              FileDescriptor.writeAll(input.fileHandleForWriting.fileDescriptor, line) else {
            return .lost(death())
        }
        switch lines.next(timeout: timeout) {
        case .line(let data):
            guard let reply = try? JSONDecoder().decode(WorkerProtocol.Reply.self, from: data), reply.id == request.id else {
                stop()
                return .lost(.init(code: "worker-crashed", message: "the worker sent an unreadable reply", cause: nil))
            }
            return .reply(reply)
        case .end:
            return .lost(death())
        case .timedOut:
            stop()
            return .lost(.init(code: "timed-out", message: "decoding took longer than \(Int(timeout)) s; the worker was stopped", cause: nil))
        }
    }

    /// Closes the worker's input and waits for it to exit.
    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private func death() -> WorkerProtocol.Failure {
        process.waitUntilExit()
        let how = process.terminationReason == .uncaughtSignal
            ? "was killed by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
        return .init(code: "worker-crashed", message: "the decoder \(how) while working on this file", cause: nil)
    }
}

import ArgumentParser
import Foundation
import ImageTableCore
import WorkerProtocol

/// Hands a command's pixel work to `imagetable-worker`, the executable that runs libvips, over
/// the worker protocol.
///
/// The worker shares this process's standard output and error, so the job's report and a PNG
/// written to `-o -` are the command's own; the command exits with the status the job ends with.
/// Ctrl-C reaches both processes (they share the terminal's process group).
enum WorkerLauncher {
    /// Starts a worker, runs `request` in it and exits with its status. Returns only by
    /// throwing: exit 1 after reporting a worker that cannot start, is from another build, or
    /// died.
    static func run(_ request: WorkerRequest) throws -> Never {
        let connection: WorkerConnection
        do {
            connection = try WorkerConnection(executable: BakeCommand.workerPath,
                                              hello: Hello(renderingVersion: TableFormat.pipelineRenderingVersion,
                                                           executable: BakeCommand.executablePath),
                                              outputToStandardError: false)
        } catch {
            let code: ImageTableError.Code = if case .mismatch = error { .workerMismatch } else { .workerUnavailable }
            StandardError.report(ImageTableError(code, error.description, path: BakeCommand.workerPath))
            throw ExitStatus.failure
        }
        let reply = connection.send(request, timeout: nil)
        connection.finish()
        switch reply {
        case .success(.finished(let finished)):
            throw ExitCode(finished.status)
        case .success(.failed(let failure)):
            StandardError.report(ImageTableError(ImageTableError.Code(rawValue: failure.code.rawValue) ?? .protocolError, failure.message,
                                                 path: BakeCommand.workerPath, cause: failure.cause))
        case .success(let other):
            StandardError.report(ImageTableError(.protocolError, "the worker answered with \(other)", path: BakeCommand.workerPath))
        case .failure(.died(_, SIGPIPE)):
            // `preview -o - | head -c 8`: the worker, writing to the standard output it shares,
            // met the closed pipe, which is no crash; end as the worker did, as `cat` would.
            StandardOutputFlush.endAsAClosedPipeDoes()
        case .failure(let loss):
            StandardError.report(ImageTableError(.workerCrashed, loss.description, path: BakeCommand.workerPath))
        }
        throw ExitStatus.failure
    }

    /// Refuses `-o -` when standard output is a terminal, where the PNG's bytes would garble the
    /// screen and drive it (the `--help` example printed them there), as `curl` refuses.
    ///
    /// - Parameter output: the `-o` value.
    /// - Throws: ``ExitStatus/failure`` after reporting `output-failed`.
    static func refuseTerminal(_ output: String?) throws {
        guard output == "-", isatty(STDOUT_FILENO) == 1 else { return }
        StandardError.report(ImageTableError(.outputFailed, "standard output is a terminal, which a PNG would garble; send it to a file "
                                             + "or a program (-o - > out.png, -o - | display) or give -o FILE", path: "<stdout>"))
        throw ExitStatus.failure
    }

    /// Opens `table` to report a missing, unreadable or damaged table here, with the same
    /// messages as `inspect`, before libvips is loaded for nothing.
    ///
    /// - Returns: the table, open for reading.
    @discardableResult
    static func checkTable(_ table: String) throws -> ImageTableReader {
        do {
            return try TableOpener.open(table)
        } catch {
            StandardError.report(error)
            throw ExitStatus.failure
        }
    }
}

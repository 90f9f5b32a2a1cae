import Foundation
import ImageTableCore
import WorkerProtocol

/// One worker process of a bake, with the scratch memory it shares with the bake: driven by one
/// dispatcher thread, one source at a time.
final class BakeWorker {
    let connection: WorkerConnection
    let scratch: SharedScratch?

    /// Starts a worker and greets it with this build's versions.
    ///
    /// - Parameters:
    ///   - executable: `imagetable-worker`.
    ///   - scratchBytes: the scratch memory the largest family needs.
    /// - Throws: ``ImageTableError`` `worker-unavailable` (missing, cannot run, no handshake) or
    ///   `worker-mismatch` (another build's protocol or rendering version), naming both sides.
    init(executable: String, scratchBytes: Int) throws(ImageTableError) {
        scratch = SharedScratch(bytes: scratchBytes)
        do {
            connection = try WorkerConnection(executable: executable, hello: Self.hello, scratch: scratch?.descriptor,
                                              outputToStandardError: true)
        } catch {
            switch error {
            case .mismatch: throw ImageTableError(.workerMismatch, error.description, path: executable)
            case .cannotRun, .noHandshake: throw ImageTableError(.workerUnavailable, error.description, path: executable)
            }
        }
    }

    /// This build's greeting.
    static var hello: Hello {
        Hello(renderingVersion: TableFormat.pipelineRenderingVersion,
              executable: Bundle.main.executablePath ?? CommandLine.arguments.first ?? "imagetable")
    }

    /// The worker's scratch memory, for ``FamilyWrite``.
    var scratchMemory: UnsafeMutableRawBufferPointer? { scratch?.memory }

    func finish() { connection.finish() }
}

extension WorkerConnection.Loss {
    /// The loss as a failure of the source the worker was working on.
    func error(path: String, key: String) -> ImageTableError {
        switch self {
        case .died(_, let signal?):
            ImageTableError(.workerCrashed, "the decoder was killed by signal \(signal) while working on this file", path: path, key: key)
        case .died(let status, nil):
            ImageTableError(.workerCrashed, "the decoder exited with status \(status) while working on this file", path: path, key: key)
        case .timedOut(let seconds):
            ImageTableError(.timedOut, "decoding took longer than \(Int(seconds)) s; the worker was stopped", path: path, key: key)
        case .brokeProtocol:
            ImageTableError(.protocolError, description, path: path, key: key)
        }
    }
}

extension WorkerFailure {
    /// The worker's failure as this package's error about `path`: the code carried unchanged.
    func error(path: String, key: String) -> ImageTableError {
        ImageTableError(ImageTableError.Code(rawValue: code.rawValue) ?? .protocolError, message, path: path, key: key, cause: cause)
    }
}

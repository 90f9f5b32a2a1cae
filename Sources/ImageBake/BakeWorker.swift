import Foundation
import ImageTableCore
import WorkerProtocol

/// One worker process of a bake, with the scratch memory it shares with the bake: driven by one
/// dispatcher thread, with up to ``depth`` sources sent to it at a time.
final class BakeWorker {
    let connection: WorkerConnection
    let scratch: SharedScratch?
    /// Bytes of scratch memory one source may use.
    let scratchBytes: Int
    /// How many sources may be outstanding at once, each with scratch memory of its own.
    let depth: Int

    /// Starts a worker and greets it with this build's versions.
    ///
    /// - Parameters:
    ///   - executable: `imagetable-worker`.
    ///   - scratchBytes: the scratch memory the largest family needs, per source.
    ///   - depth: the sources that may be outstanding at once.
    /// - Throws: ``ImageTableError`` `worker-unavailable` (missing, cannot run, no handshake) or
    ///   `worker-mismatch` (another build's protocol or rendering version), naming both sides.
    init(executable: String, scratchBytes: Int, depth: Int) throws(ImageTableError) {
        self.scratchBytes = scratchBytes
        self.depth = depth
        scratch = SharedScratch(bytes: scratchBytes * depth)
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

    /// The scratch memory of outstanding source number `part` (below ``depth``), for
    /// ``FamilyWrite``, and where it starts in the memory the worker maps.
    func scratchMemory(part: Int) -> (memory: UnsafeMutableRawBufferPointer, offset: Int)? {
        guard let scratch else { return nil }
        let offset = part * scratchBytes
        return (UnsafeMutableRawBufferPointer(rebasing: scratch.memory[offset..<offset + scratchBytes]), offset)
    }

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

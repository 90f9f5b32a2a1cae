import Foundation
import ImageTableCore
import WorkerProtocol

/// One worker process of a bake, with the scratch memory it shares with the bake: driven by one
/// dispatcher thread, with up to ``depth`` sources sent to it at a time.
final class BakeWorker {
    let connection: WorkerConnection
    let scratch: SharedScratch
    /// Bytes of scratch memory one source may use.
    let scratchBytes: Int
    /// How many sources may be outstanding at once, each with scratch memory of its own.
    let depth: Int

    /// Starts a worker and greets it with this build's versions and the bake's tables.
    ///
    /// - Parameters:
    ///   - executable: `imagetable-worker`.
    ///   - tables: the bake's tables, which its jobs name by position.
    ///   - scratchBytes: the scratch memory the largest family needs, per source.
    ///   - depth: the sources that may be outstanding at once.
    /// - Throws: ``ImageTableError`` `worker-unavailable` (missing, cannot run, no handshake) or
    ///   `worker-mismatch` (another build's protocol or rendering version), naming both sides;
    ///   `io` when no memory can be shared with it.
    init(executable: String, tables: [CatalogueTable], scratchBytes: Int, depth: Int, memoryLimit: Int? = nil) throws(ImageTableError) {
        self.scratchBytes = scratchBytes
        // A queue's worth of scratch memory, or one source's where the system grants no more
        // (a file size limit, a small temporary directory); then the worker gets one at a time.
        // Without any, a full table's member would have nowhere to be drawn but its slot before
        // the source has decoded: refuse rather than bake without that promise.
        if depth > 1, let scratch = SharedScratch(bytes: scratchBytes * depth) {
            self.scratch = scratch
            self.depth = depth
        } else if let scratch = SharedScratch(bytes: scratchBytes) {
            self.scratch = scratch
            self.depth = 1
        } else {
            let code = errno
            throw ImageTableError(code == ENOSPC || code == EFBIG || code == EDQUOT ? .noSpace : .io,
                                  "cannot create memory to share with the worker (shared memory and the temporary directory both refused)",
                                  cause: String(cString: strerror(code)))
        }
        do {
            var hello = Self.hello
            hello.tables = tables
            connection = try WorkerConnection(executable: executable, hello: hello, scratch: scratch.descriptor,
                                              outputToStandardError: true,
                                              arguments: memoryLimit.map { [WorkerArguments.memoryLimit($0)] } ?? [])
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
    func scratchMemory(part: Int) -> (memory: UnsafeMutableRawBufferPointer, offset: Int) {
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
            ImageTableError(.timedOut, "decoding took longer than \(Self.seconds(seconds)); the worker was stopped", path: path, key: key)
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

import Foundation
import ImagePipeline
import ImageTableCore

/// Executes bake jobs: decodes one source and renders it into the reserved slots it names.
///
/// Runs inside each worker process (``BakeWorker/serve(input:output:options:)``), one job at a
/// time, so libvips is only ever driven from one thread per process: the liborc race of
/// `docs/PIPELINE.md` cannot happen, and a decoder crash ends only that worker.
final class JobRunner {
    private let renderer: ImageRenderer
    private var tables: [String: DelegatedSlots] = [:]

    init(options: RenderOptions) {
        renderer = ImageRenderer(options: options)
    }

    func run(_ job: WorkerProtocol.Job) -> WorkerProtocol.Reply {
        do {
            var targets: [RenderTarget] = []
            for member in job.members {
                let slots = try table(member.table, hash: member.parametersHash)
                let memory = try slots.pixels(slot: member.slot, generation: member.generation)
                targets.append(RenderTarget(spec: member.spec, pixels: memory, bytesPerRow: slots.layout.bytesPerRow))
            }
            let report = try renderer.render(.file(job.source), into: targets)
            return WorkerProtocol.Reply(id: job.id, rects: report.members.map(\.contentRect), decodes: report.decodes, failure: nil)
        } catch let error as PipelineError {
            return failure(job, code: error.code.rawValue, message: error.message, cause: error.cause)
        } catch let error as TableError {
            // The bake's own table changed under the job: not the source's fault, but not baked either.
            tables[error.path ?? ""] = nil
            return failure(job, code: "table-changed", message: error.message, cause: nil)
        } catch {
            return failure(job, code: "render-failed", message: "\(error)", cause: nil)
        }
    }

    private func failure(_ job: WorkerProtocol.Job, code: String, message: String, cause: String?) -> WorkerProtocol.Reply {
        WorkerProtocol.Reply(id: job.id, rects: nil, decodes: 0, failure: .init(code: code, message: message, cause: cause))
    }

    private func table(_ path: String, hash: String) throws -> DelegatedSlots {
        let expected = WorkerProtocol.bytes(hex: hash)
        if let open = tables[path], open.parametersHash == expected { return open }
        let slots = try DelegatedSlots(path: path, parametersHash: expected)
        tables[path] = slots
        return slots
    }
}

/// The worker process's side of the bake.
public enum BakeWorker {
    /// Serves jobs from `input` until it closes, one reply line per job line on `output`.
    ///
    /// `imagetable bake-worker` runs this; nothing else should. Each job's pixels go straight into
    /// the table files' reserved slots.
    ///
    /// - Parameters:
    ///   - input: the file descriptor jobs arrive on.
    ///   - output: the file descriptor replies go to.
    ///   - options: decode limits (maximum pixels and bytes, `fail_on` level).
    /// - Returns: the process exit status: 0 when the input closed normally, 2 on a protocol error.
    public static func serve(input: Int32 = 0, output: Int32 = 1, options: RenderOptions) -> Int32 {
        let runner = JobRunner(options: options)
        let lines = LineReader(fd: input)
        while let line = lines.next() {
            guard let job = try? JSONDecoder().decode(WorkerProtocol.Job.self, from: line),
                  let reply = try? WorkerProtocol.encodeLine(runner.run(job)) else { return 2 }
            guard FileDescriptor.writeAll(output, reply) else { return 2 }
        }
        return 0
    }
}

/// Raw file descriptor writes that report failure instead of raising SIGPIPE or trapping.
enum FileDescriptor {
    static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += n
            }
            return true
        }
    }
}

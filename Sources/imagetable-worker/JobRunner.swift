import Foundation
import ImagePipeline
import ImageBake
import ImageTableCore

/// Executes bake jobs: decodes one source and renders it into the reserved slots it names.
///
/// Runs inside each worker process, one job at a time, so libvips is only ever driven from one
/// thread per process: the liborc race of `docs/PIPELINE.md` cannot happen, and a decoder crash
/// ends only that worker.
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
            // The bake reads the pixels back from the page cache; this process is done with them.
            for member in job.members { tables[member.table]?.releaseMappedPages(slot: member.slot) }
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

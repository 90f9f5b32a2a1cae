import Foundation
import ImageBake
import ImagePipeline
import ImageTableCore

/// Executes bake requests: decodes one source and renders it into the reserved slots it names,
/// or into buffers it holds for members whose tables were full, until the bake places them.
///
/// Runs inside each worker process, one request at a time, so libvips is only ever driven from
/// one thread per process: the liborc race of `docs/PIPELINE.md` cannot happen, and a decoder
/// crash ends only that worker.
final class JobRunner {
    /// A member rendered into memory of our own, waiting for a slot.
    struct Held {
        let memory: UnsafeMutableRawBufferPointer
        let bytesPerRow: Int
        let height: Int
    }

    private let renderer: ImageRenderer
    private var tables: [String: DelegatedSlots] = [:]
    private var held: [Held] = []

    init(options: DecodeOptions) {
        renderer = ImageRenderer(options: options)
    }

    func handle(_ request: WorkerProtocol.Request) -> WorkerProtocol.Reply {
        if let job = request.render { return run(job, id: request.id) }
        return place(request.place ?? [], id: request.id)
    }

    private func run(_ job: WorkerProtocol.Job, id: Int) -> WorkerProtocol.Reply {
        releaseHeld()
        var targets: [RenderTarget] = []
        do {
            for member in job.members {
                let format = try TableFormat(canonicalParameters: member.format)
                if let target = member.target {
                    let slots = try table(target.table, hash: target.parametersHash)
                    let memory = try slots.pixels(slot: target.slot, generation: target.generation)
                    targets.append(RenderTarget(format: format, pixels: memory, bytesPerRow: slots.layout.bytesPerRow))
                } else {
                    // The table's own row size, so that placing is one copy of the image bytes.
                    let rowBytes = (format.width * format.style.bytesPerPixel + 63) / 64 * 64
                    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: rowBytes * format.height, alignment: 64)
                    held.append(Held(memory: memory, bytesPerRow: rowBytes, height: format.height))
                    targets.append(RenderTarget(format: format, pixels: memory, bytesPerRow: rowBytes))
                }
            }
        } catch {
            // The bake's own table changed under the job: not the source's fault, but not baked either.
            releaseHeld()
            if let path = (error as? ImageTableError)?.path { tables[path] = nil }
            return failure(id, code: "table-changed", message: (error as? ImageTableError)?.message ?? "\(error)", cause: nil)
        }
        do {
            let report = try renderer.render(.file(job.source), into: targets)
            // The bake reads the pixels back from the page cache; this process is done with them.
            for target in job.members.compactMap(\.target) { tables[target.table]?.releaseMappedPages(slot: target.slot) }
            return WorkerProtocol.Reply(id: id, rects: report.members.map(\.contentRect), decodes: report.decodes, failure: nil)
        } catch {
            releaseHeld()
            return failure(id, code: error.code.rawValue, message: error.message, cause: error.cause)
        }
    }

    /// Copies the held buffers into their slots, in order, and frees them.
    private func place(_ targets: [WorkerProtocol.SlotTarget], id: Int) -> WorkerProtocol.Reply {
        defer { releaseHeld() }
        guard targets.isEmpty || targets.count == held.count else {
            return failure(id, code: "render-failed", message: "asked to place \(targets.count) buffers, holding \(held.count)", cause: nil)
        }
        do {
            for (buffer, target) in zip(held, targets) {
                let slots = try table(target.table, hash: target.parametersHash)
                guard slots.layout.bytesPerRow == buffer.bytesPerRow, slots.layout.height == buffer.height else {
                    return failure(id, code: "table-changed", message: "the table's slots no longer fit the rendered image", cause: nil)
                }
                let memory = try slots.pixels(slot: target.slot, generation: target.generation)
                memory.copyMemory(from: UnsafeRawBufferPointer(buffer.memory))
                slots.releaseMappedPages(slot: target.slot)
            }
            return WorkerProtocol.Reply(id: id, rects: nil, decodes: 0, failure: nil)
        } catch {
            return failure(id, code: "table-changed", message: "\(error)", cause: nil)
        }
    }

    private func releaseHeld() {
        for buffer in held { buffer.memory.deallocate() }
        held = []
    }

    private func failure(_ id: Int, code: String, message: String, cause: String?) -> WorkerProtocol.Reply {
        WorkerProtocol.Reply(id: id, rects: nil, decodes: 0, failure: .init(code: code, message: message, cause: cause))
    }

    private func table(_ path: String, hash: String) throws -> DelegatedSlots {
        let expected = WorkerProtocol.bytes(hex: hash)
        if let open = tables[path], open.parametersHash == expected { return open }
        let slots = try DelegatedSlots(path: path, parametersHash: expected)
        tables[path] = slots
        return slots
    }
}

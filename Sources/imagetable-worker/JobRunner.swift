import Foundation
import ImagePipeline
import ImageTableCore
import WorkerProtocol

/// Executes render jobs: decodes one source once and renders every member into its destination,
/// a slot the bake reserved or the scratch memory shared with it.
///
/// Runs inside each worker process, one job at a time, so libvips is only ever driven from one
/// thread per process: the liborc race of `docs/PIPELINE.md` cannot happen, and a decoder crash
/// ends only this worker. A job carries everything it needs beyond the tables the bake's
/// handshake listed; what stays between jobs is only a cache of those tables mapped, each checked
/// again (parameter hash, reservation generation) per job.
final class JobRunner {
    /// The bake's tables, from its handshake: jobs name them by position.
    private var catalogue: [CatalogueTable] = []
    private var tables: [Int: DelegatedSlots] = [:]
    /// The catalogue's formats parsed, with their parameters hash (a SHA-1 of a rebuilt string:
    /// worth computing once, not per job), by position.
    private var formats: [Int: (format: TableFormat, hash: [UInt8])] = [:]
    /// Private memory the members bound for slots are rendered into, then written to their
    /// slots in one `pwrite` each (see ``DelegatedSlots/write(_:slot:generation:)``): one
    /// buffer per member position, kept from job to job so its pages are faulted in once.
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private let scratch = SharedScratch(attachingTo: WorkerDescriptors.scratch)
    private var configured = false

    /// Takes the tables of the bake's handshake.
    func adopt(_ hello: Hello) {
        catalogue = hello.tables
        tables = [:]
        formats = [:]
    }

    func run(_ job: RenderJob) -> WorkerReply {
        if !configured {
            // One source at a time per process: libvips' own threads would only compete with the
            // other workers for the cores.
            PipelineRuntime.configure(.init(concurrency: 1))
            configured = true
        }
        let targets: [RenderTarget]
        var planned: [TableFormat] = []
        do throws(WorkerFailure) {
            var built: [RenderTarget] = []
            for (position, member) in job.members.enumerated() { built.append(try target(member, position: position)) }
            targets = built
            for position in job.planned { planned.append(try parsed(position).format) }
        } catch {
            return .failed(error)
        }
        let options = DecodeOptions(maxPixels: job.limits.maxPixels, maxSourceBytes: job.limits.maxSourceBytes,
                                    failOn: FailLevel(rawValue: job.limits.failOn) ?? .error)
        do {
            // One read: the bytes decoded are the bytes fingerprinted, so an entry can never carry
            // the fingerprint of another version of its file.
            let read = try SourceRead(path: job.source, maxBytes: options.maxSourceBytes, keepingBytes: true)
            let report = try ImageRenderer(options: options).render(bytes: read.bytes ?? [], name: job.source, into: targets,
                                                                    planningWith: planned)
            // Checksummed here, while the pixels are still in this core's cache, and in parallel
            // across workers, rather than read back by the bake.
            let checksums = targets.map { CRC32.checksum(UnsafeRawBufferPointer($0.pixels)) }
            for (member, target) in zip(job.members, targets) {
                guard case .slot(let slot, let generation) = member.destination else { continue }
                do {
                    let slots = tables[member.table]!
                    // With its zero padding to the end of a page: whole pages only (see DelegatedSlots.write).
                    let whole = UnsafeRawBufferPointer(start: target.pixels.baseAddress, count: slots.layout.writtenSlotBytes)
                    try slots.write(whole, slot: slot, generation: generation)
                } catch {
                    tables[member.table] = nil
                    return .failed(WorkerFailure(error.code == .io ? .renderFailed : .tableChanged, named(error, member.table)))
                }
            }
            let rects = report.members.map { WireRect(x: $0.contentRect.x, y: $0.contentRect.y, width: $0.contentRect.width,
                                                       height: $0.contentRect.height) }
            let s = read.stat
            return .rendered(Rendered(contentRects: rects, decodes: report.decodes, fingerprint: read.fingerprint!.uuidString,
                                      stat: SourceStat(device: s.device, inode: s.inode, size: s.size, modifiedNs: s.modifiedNs,
                                                       changedNs: s.changedNs, readNs: read.startedNs),
                                      warnings: report.warnings, pixelChecksums: checksums))
        } catch {
            let code = WorkerFailure.Code(rawValue: error.code.rawValue) ?? .renderFailed
            return .failed(WorkerFailure(code, error.message, cause: error.cause))
        }
    }

    /// Where one member's pixels go, checked: its format parses and is this build's rendering
    /// version, its slot is still reserved with that generation in a table of that format, or its
    /// scratch bytes lie inside the scratch memory.
    private func target(_ member: RenderMember, position: Int) throws(WorkerFailure) -> RenderTarget {
        let (format, hash) = try parsed(member.table)
        guard format.renderingVersion == TableFormat.pipelineRenderingVersion else {
            throw WorkerFailure(.workerMismatch, "the format asks for rendering version \(format.renderingVersion); "
                                + "this worker renders version \(TableFormat.pipelineRenderingVersion)")
        }
        switch member.destination {
        case .slot(let slot, let generation):
            do {
                let slots = try table(member.table, hash: hash)
                try slots.checkReservation(slot: slot, generation: generation)
                return RenderTarget(format: format, pixels: buffer(position, bytes: slots.layout.imageBytes, padded: slots.layout.writtenSlotBytes),
                                    bytesPerRow: slots.layout.bytesPerRow)
            } catch {
                // The bake's table changed under the job: not the source's fault, but not baked either.
                tables[member.table] = nil
                throw WorkerFailure(.tableChanged, named(error, member.table))
            }
        case .scratch(let offset):
            let layout: TableLayout
            do { layout = try format.layout() } catch { throw WorkerFailure(.protocolError, error.message) }
            guard let scratch, offset >= 0, offset + layout.imageBytes <= scratch.memory.count else {
                throw WorkerFailure(.protocolError, "scratch bytes \(offset)..<\(offset + layout.imageBytes) lie outside the scratch memory")
            }
            let memory = UnsafeMutableRawBufferPointer(rebasing: scratch.memory[offset..<offset + layout.imageBytes])
            return RenderTarget(format: format, pixels: memory, bytesPerRow: layout.bytesPerRow)
        }
    }

    /// The private buffer for member `position`, trimmed to `bytes`, with `padded` bytes behind
    /// its start of which those past `bytes` are zero (a render writes only the image's bytes,
    /// so the padding stays as it was allocated, from job to job).
    private func buffer(_ position: Int, bytes: Int, padded: Int) -> UnsafeMutableRawBufferPointer {
        while buffers.count <= position { buffers.append(UnsafeMutableRawBufferPointer(start: nil, count: 0)) }
        if buffers[position].count < padded {
            buffers[position].deallocate()
            buffers[position] = .allocate(byteCount: padded, alignment: 64)
            buffers[position].initializeMemory(as: UInt8.self, repeating: 0)
        } else {
            // A buffer last used for a larger image holds its pixels where this one's padding is.
            UnsafeMutableRawBufferPointer(rebasing: buffers[position][bytes..<padded]).initializeMemory(as: UInt8.self, repeating: 0)
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffers[position][0..<bytes])
    }

    /// The format of the catalogue's table `position`, and its parameters hash, made once per worker.
    private func parsed(_ position: Int) throws(WorkerFailure) -> (format: TableFormat, hash: [UInt8]) {
        if let known = formats[position] { return known }
        guard catalogue.indices.contains(position) else {
            throw WorkerFailure(.protocolError, "the job names table \(position); the handshake listed \(catalogue.count)")
        }
        let format: TableFormat
        do {
            format = try TableFormat(canonicalParameters: catalogue[position].format)
        } catch {
            throw WorkerFailure(.protocolError, "the member's format does not parse: \(error.message)")
        }
        let entry = (format, format.parametersHash)
        formats[position] = entry
        return entry
    }

    /// A table's error in words that name the table: the bake reports it against the source.
    private func named(_ error: ImageTableError, _ position: Int) -> String {
        "\(catalogue[position].path): \(error.message)"
    }

    private func table(_ position: Int, hash: [UInt8]) throws(ImageTableError) -> DelegatedSlots {
        if let open = tables[position], open.parametersHash == hash { return open }
        let slots = try DelegatedSlots(path: catalogue[position].path, parametersHash: hash)
        tables[position] = slots
        return slots
    }
}

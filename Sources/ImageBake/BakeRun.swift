import Foundation
import ImageManifest
import ImageTableCore
import Synchronization
import WorkerProtocol

/// The parallel part of a bake: `jobs` dispatcher threads, each feeding one worker process.
final class BakeRun: @unchecked Sendable {
    struct Item: Sendable {
        let family: Int
        let source: SourceFile
    }

    enum Result {
        case unchanged
        case decoded(Int)
        case failed(SourceFailure)
        case fatal(ImageTableError)
    }

    struct State {
        var next = 0
        var done = 0
        var summary = BakeSummary()
        var fatal: ImageTableError?
        var stop = false
        var lastProgress = Date.distantPast
        var consecutiveLosses = 0
    }

    let manifest: Manifest
    let tables: [BakeTable]
    let items: [Item]
    let options: BakeOptions
    let started: Date
    /// Table indices per family.
    let familyTables: [[Int]]
    /// The scratch memory the largest family needs, per worker.
    let scratchBytes: Int
    let state = Mutex(State())

    init(manifest: Manifest, tables: [BakeTable], items: [Item], options: BakeOptions, started: Date) {
        self.manifest = manifest
        self.tables = tables
        self.items = items
        self.options = options
        self.started = started
        familyTables = manifest.families.map { family in tables.indices.filter { tables[$0].format.family == family.name } }
        scratchBytes = familyTables.map { FamilyWrite.scratchBytes(for: $0.map { tables[$0].format }) }.max() ?? 0
    }

    /// Runs every item; returns the summary counts and any fatal error.
    func execute() -> (summary: BakeSummary, fatal: ImageTableError?) {
        // One thread per job, whatever the number of cores: `--jobs N` means N workers.
        let threads = max(1, min(options.jobs, items.count))
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            let thread = Thread { [self] in
                dispatch()
                group.leave()
            }
            thread.name = "bake dispatcher \(index)"
            thread.start()
        }
        group.wait()
        var fatal = state.withLock { $0.fatal }
        for table in tables {
            do throws(ImageTableError) { try table.publishPending() } catch { fatal = fatal ?? error }
        }
        report(force: true)
        return state.withLock { ($0.summary, fatal) }
    }

    private func dispatch() {
        var worker: BakeWorker?
        defer { worker?.finish() }
        while let item = nextItem() {
            let result = process(item, worker: &worker)
            state.withLock { s in
                s.done += 1
                switch result {
                case .unchanged: s.summary.unchanged += 1
                case .decoded(let n): s.summary.decoded += n
                case .failed(let failure):
                    s.summary.failed.append(failure)
                    if options.strict { s.stop = true; s.summary.stoppedEarly = true }
                case .fatal(let error):
                    s.fatal = s.fatal ?? error
                    s.stop = true
                }
            }
            report(force: false)
        }
    }

    private func nextItem() -> Item? {
        state.withLock { s in
            guard !s.stop, s.next < items.count else { return nil }
            defer { s.next += 1 }
            return items[s.next]
        }
    }

    private func process(_ item: Item, worker: inout BakeWorker?) -> Result {
        let family = manifest.families[item.family]
        let key = item.source.key, path = item.source.path
        func failed(_ error: ImageTableError) -> Result { .failed(SourceFailure(family: family.name, error: error)) }
        let fingerprint: UUID
        do {
            fingerprint = try SourceFingerprint.uuid(contentsOf: path).uuid
        } catch {
            return failed(ImageTableError(.unreadable, error.message, path: path, key: key))
        }
        let stale = familyTables[item.family].filter { !tables[$0].isFresh(key: key, source: fingerprint) }
        if stale.isEmpty { return .unchanged }
        if options.dryRun { return .decoded(1) }

        do throws(ImageTableError) {
            if worker == nil { worker = try BakeWorker(executable: options.workerExecutable, scratchBytes: scratchBytes) }
        } catch {
            return .fatal(error)  // every other source would fail the same way
        }
        // Slots first without evicting: a source that fails to decode must not cost an entry.
        var write: FamilyWrite
        do throws(ImageTableError) {
            write = try FamilyWrite(key: key, sourceUUID: fingerprint, tables: stale.map { tables[$0] }, scratch: worker!.scratchMemory)
        } catch {
            return .fatal(error)
        }
        let members = zip(stale, write.destinations).map { t, destination in
            RenderMember(format: tables[t].format.canonicalParameters, destination: Self.wire(destination, table: tables[t]))
        }
        let job = RenderJob(source: path, members: members, limits: options.limits)
        switch worker!.connection.send(.render(job), timeout: options.timeout) {
        case .failure(let loss):
            write.abandon()
            worker = nil
            let losses = state.withLock { s in s.consecutiveLosses += 1; return s.consecutiveLosses }
            if losses >= 3 && state.withLock({ $0.summary.decoded == 0 }) {
                return .fatal(ImageTableError(.workerUnavailable, "worker processes keep failing before baking anything: \(loss)",
                                              path: options.workerExecutable))
            }
            return failed(loss.error(path: path, key: key))
        case .success(.failed(let failure)):
            write.abandon()
            return failed(failure.error(path: path, key: key))
        case .success(.rendered(let rendered)) where rendered.contentRects.count == members.count:
            state.withLock { $0.consecutiveLosses = 0 }
            // Decoded: now full tables may evict, and what was drawn in scratch memory is placed.
            do throws(ImageTableError) {
                let placed = try write.complete(contentRects: rendered.contentRects.map {
                    PixelRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height)
                })
                for (t, reservation) in zip(stale, placed) { try tables[t].enqueue(reservation) }
            } catch {
                return .fatal(error)
            }
            return .decoded(rendered.decodes)
        case .success(let other):
            write.abandon()
            worker?.connection.stop()
            worker = nil
            return failed(ImageTableError(.protocolError, "the worker answered a render request with \(other)", path: path, key: key))
        }
    }

    /// A destination as the worker protocol names it.
    private static func wire(_ destination: FamilyWrite.Destination, table: BakeTable) -> Destination {
        switch destination {
        case .slot(let r): .slot(table: table.path, slot: r.slot, generation: r.generation)
        case .scratch(let offset): .scratch(offset: offset)
        }
    }

    private func report(force: Bool) {
        guard let progress = options.progress else { return }
        let snapshot: BakeProgress? = state.withLock { s in
            let now = Date()
            guard force || now.timeIntervalSince(s.lastProgress) >= 0.1 else { return nil }
            s.lastProgress = now
            return BakeProgress(done: s.done, total: items.count, failed: s.summary.failed.count, elapsed: now.timeIntervalSince(started))
        }
        if let snapshot { progress(snapshot) }
    }
}

import Foundation
import ImageManifest
import ImageTableCore
import Synchronization
import WorkerProtocol

/// The parallel part of a bake: `jobs` dispatcher threads, each feeding one worker process.
final class BakeRun: @unchecked Sendable {
    enum Result {
        case decoded(Int)
        case failed(SourceFailure)
        /// The file changed while the worker read it: nothing baked, retried next run.
        case changedWhileReading(SourceFailure)
        /// The file was deleted after the scan listed it: a removed source, not a failure.
        case gone
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
    let jobs: [BakePlan.Job]
    let options: BakeOptions
    let bakeState: BakeState
    let started: Date
    /// The scratch memory the largest family needs, per worker.
    let scratchBytes: Int
    /// Each family's formats (canonical parameter texts), in table order: what every job plans with.
    let familyFormats: [[String]]
    let state = Mutex(State())

    init(manifest: Manifest, tables: [BakeTable], jobs: [BakePlan.Job], options: BakeOptions, state: BakeState, started: Date) {
        self.manifest = manifest
        self.tables = tables
        self.jobs = jobs
        self.options = options
        bakeState = state
        self.started = started
        scratchBytes = manifest.families.map { family in
            FamilyWrite.scratchBytes(for: tables.filter { $0.format.family == family.name }.map(\.format))
        }.max() ?? 0
        familyFormats = manifest.families.map { family in tables.filter { $0.format.family == family.name }.map(\.canonicalParameters) }
    }

    /// Runs every job; returns the summary counts and any fatal error.
    func execute() -> (summary: BakeSummary, fatal: ImageTableError?) {
        // One thread per job, whatever the number of cores: `--jobs N` means N workers.
        Parallel.forEach(min(options.jobs, jobs.count), threads: options.jobs) { [self] _ in dispatch() }
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
        while let job = nextJob() {
            let result = process(job, worker: &worker)
            state.withLock { s in
                s.done += 1
                switch result {
                case .decoded(let n): s.summary.decoded += n
                case .failed(let failure):
                    s.summary.failed.append(failure)
                    if options.strict { s.stop = true; s.summary.stoppedEarly = true }
                case .changedWhileReading(let failure):
                    s.summary.skipped.append(failure)
                case .gone:
                    s.summary.removed += 1
                case .fatal(let error):
                    s.fatal = s.fatal ?? error
                    s.stop = true
                }
            }
            if case .failed(let failure) = result { options.failed?(failure) }
            report(force: false)
        }
    }

    private func nextJob() -> BakePlan.Job? {
        state.withLock { s in
            guard !s.stop, s.next < jobs.count else { return nil }
            defer { s.next += 1 }
            return jobs[s.next]
        }
    }

    /// The source UUID of slots reserved before the worker has said which bytes it decoded
    /// (replaced then; a constant, since a random UUID per job costs reads of /dev/urandom).
    private static let unknownSource = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    private func process(_ job: BakePlan.Job, worker: inout BakeWorker?) -> Result {
        let family = manifest.families[job.family]
        let key = job.source.key, path = job.source.path
        func failed(_ error: ImageTableError) -> Result { .failed(SourceFailure(family: family.name, error: error)) }
        do throws(ImageTableError) {
            if worker == nil { worker = try BakeWorker(executable: options.workerExecutable, scratchBytes: scratchBytes) }
        } catch {
            return .fatal(error)  // every other source would fail the same way
        }
        // Slots first without evicting: a source that fails to decode must not cost an entry, and
        // a key's previous image stays until the new one is ready.
        var write: FamilyWrite
        do throws(ImageTableError) {
            write = try FamilyWrite(key: key, sourceUUID: Self.unknownSource, tables: job.tables.map { tables[$0] }, scratch: worker!.scratchMemory)
        } catch {
            return .fatal(error)
        }
        let members = zip(job.tables, write.destinations).map { t, destination in
            RenderMember(format: tables[t].canonicalParameters, destination: Self.wire(destination, table: tables[t]))
        }
        let planned = familyFormats[job.family].filter { f in !members.contains { $0.format == f } }
        let request = RenderJob(source: path, members: members, limits: options.limits(failOn: family.failOn), planned: planned)
        switch worker!.connection.send(.render(request), timeout: options.timeout) {
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
            let error = failure.error(path: path, key: key)
            if error.code == .changedWhileReading { return .changedWhileReading(SourceFailure(family: family.name, error: error)) }
            if error.code == .unreadable && FileStat(path: path) == nil { return .gone }
            return failed(error)
        case .success(.rendered(let rendered)) where rendered.contentRects.count == members.count:
            state.withLock { $0.consecutiveLosses = 0 }
            guard let fingerprint = UUID(uuidString: rendered.fingerprint) else {
                write.abandon()
                return failed(ImageTableError(.protocolError, "the worker sent no fingerprint", path: path, key: key))
            }
            // Decoded: now full tables may evict, and what was drawn in scratch memory is placed,
            // under the fingerprint of the very bytes the worker decoded.
            do throws(ImageTableError) {
                let placed = try write.complete(contentRects: rendered.contentRects.map {
                    PixelRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height)
                }, sourceUUID: fingerprint, pixelChecksums: rendered.pixelChecksums)
                for (t, reservation) in zip(job.tables, placed) {
                    // The modification time of the bytes decoded: `imagetable merge` ranks
                    // entries by it, as the plan ranks sources.
                    var reservation = reservation
                    reservation.sourceModifiedNs = rendered.stat.modifiedNs
                    try tables[t].enqueue(reservation)
                }
            } catch {
                return .fatal(error)
            }
            let s = rendered.stat
            bakeState.remember(path: path, BakeState.FileRecord(
                stat: FileStat(device: s.device, inode: s.inode, size: s.size, modifiedNs: s.modifiedNs, changedNs: s.changedNs),
                fingerprint: fingerprint, checkedNs: s.readNs, tables: []))
            if !rendered.warnings.isEmpty {
                state.withLock { $0.summary.warnings += rendered.warnings.map { "\(path): warning: \(PrintableText.escaped($0))" } }
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
            return BakeProgress(done: s.done, total: jobs.count, failed: s.summary.failed.count, elapsed: now.timeIntervalSince(started))
        }
        if let snapshot { progress(snapshot) }
    }
}

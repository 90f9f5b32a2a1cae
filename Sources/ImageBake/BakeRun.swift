import Foundation
import ImageManifest
import ImageTableCore
import WorkerProtocol

/// The parallel part of a bake: `jobs` dispatcher threads, each feeding one worker process.
final class BakeRun: @unchecked Sendable {
    enum Result {
        case decoded(Int)
        case failed(SourceFailure)
        /// The file changed while the worker read it: nothing baked, retried next run.
        case changedWhileReading(SourceFailure)
        /// The file was deleted after the scan listed it: a removed source, not a failure;
        /// `held` when its key has an entry (a changed source, not a new one).
        case gone(held: Bool)
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
        /// How many of those losses were timeouts, the last ones.
        var consecutiveTimeouts = 0
    }

    let manifest: Manifest
    let tables: [BakeTable]
    let jobs: [BakePlan.Job]
    let options: BakeOptions
    let bakeState: BakeState
    let started: Date
    /// The scratch memory the largest family needs, per worker.
    let scratchBytes: Int
    /// Each family's tables (positions in ``tables``): what every job plans with.
    let familyTables: [[Int]]
    /// The tables as the workers' handshake lists them, in ``tables``' order: jobs name them by position.
    let catalogue: [CatalogueTable]
    /// Per family, what a failed decode is remembered with (``BakeState/failureSettings(of:tables:options:)``).
    let failureSettings: [String]
    /// Sources each worker has outstanding (``depth(options:tables:scratchBytes:)``).
    let depth: Int
    let state = AdaptiveMutex(State())
    /// When the run began sending sources (``execute()``).
    private let renderStarted = AdaptiveMutex(Date())

    init(manifest: Manifest, tables: [BakeTable], jobs: [BakePlan.Job], options: BakeOptions, state: BakeState, failureSettings: [String],
         started: Date) {
        self.manifest = manifest
        self.tables = tables
        self.jobs = jobs
        self.options = options
        bakeState = state
        self.started = started
        scratchBytes = manifest.families.map { family in
            FamilyWrite.scratchBytes(for: tables.filter { $0.format.family == family.name }.map(\.format))
        }.max() ?? 0
        depth = Self.depth(options: options, tables: tables, scratchBytes: scratchBytes)
        familyTables = manifest.families.map { family in tables.indices.filter { tables[$0].format.family == family.name } }
        catalogue = tables.map { CatalogueTable(path: $0.path, format: $0.canonicalParameters) }
        self.failureSettings = failureSettings
    }

    /// Runs every job; returns the summary counts and any fatal error.
    func execute() -> (summary: BakeSummary, fatal: ImageTableError?) {
        renderStarted.withLock { $0 = Date() }
        options.interruption?.begin()
        // One thread per job, whatever the number of cores: `--jobs N` means N workers.
        Parallel.forEach(min(options.jobs, jobs.count), threads: options.jobs) { [self] _ in dispatch() }
        // Asked once more, once no signal can be caught any more: a bake interrupted after its
        // last source was sent stops as one interrupted earlier (the command then ends by the
        // signal), and one that finished reports as finished.
        options.interruption?.end()
        if let error = options.interruption?.requested() { state.withLock { $0.fatal = $0.fatal ?? error } }
        var fatal = state.withLock { $0.fatal }
        for table in tables {
            do throws(ImageTableError) { try table.publishPending() } catch { fatal = fatal ?? error }
        }
        report(force: true)
        return state.withLock { s in
            s.summary.notAttempted = jobs.count - s.done
            return (s.summary, fatal)
        }
    }

    /// Sources each worker has outstanding: up to ``BakeOptions/outstandingPerWorker``, as many
    /// as hold at most a quarter of every table's slots at once (each outstanding source holds a
    /// slot in each of its tables) and keep the scratch memory of all workers together within
    /// 32 MiB (it is shared memory, which a container may have little of); at least one, and
    /// one with `--strict`.
    static func depth(options: BakeOptions, tables: [BakeTable], scratchBytes: Int) -> Int {
        // `--strict` stops at the first failure: nothing should be queued behind it.
        var depth = options.strict ? 1 : max(1, options.outstandingPerWorker)
        let capacity = tables.map(\.format.capacity).min() ?? Int.max
        let workers = max(1, options.jobs)
        while depth > 1 && (4 * depth * workers > capacity || depth * workers * scratchBytes > 32 << 20) { depth -= 1 }
        return depth
    }

    /// One worker's loop: keeps it ``depth`` sources ahead, takes its answers in order.
    private func dispatch() {
        var worker: BakeWorker?
        defer { worker?.finish() }
        var outstanding: [Outstanding] = []
        // Sources sent to a worker that was lost before it answered them: sent again first.
        var again: [BakePlan.Job] = []
        while true {
            var exhausted = false
            filling: while outstanding.count < min(ahead(), worker?.depth ?? depth) {
                guard let job = nextJob(again: &again) else {
                    exhausted = true
                    break
                }
                switch send(job, worker: &worker, busyParts: outstanding.map(\.part), behind: outstanding.count) {
                case .sent(let source):
                    outstanding.append(source)
                case .done(let result):
                    record(result)
                    if worker == nil { break filling }
                case .sendAgain:
                    // What is outstanding is answered (or given back, the worker gone) first.
                    again.append(job)
                    break filling
                }
            }
            guard !outstanding.isEmpty else {
                if exhausted { break }
                continue
            }
            let source = outstanding.removeFirst()
            record(receive(source, reply: worker!.connection.receive(source.submitted, timeout: options.timeout), worker: &worker))
            if worker == nil {
                // Lost with sources still queued: replies come in order, so the worker never
                // started them; they are neither failures nor done, and go to the next worker.
                for queued in outstanding { queued.write.abandon() }
                again.append(contentsOf: outstanding.reversed().map(\.job))  // taken from the end: in the order sent
                outstanding.removeAll()
            }
        }
    }

    private func record(_ result: Result) {
        state.withLock { s in
            s.done += 1
            switch result {
            case .decoded(let n): s.summary.decoded += n
            case .failed(let failure):
                s.summary.failed.append(failure)
                if options.strict { s.stop = true; s.summary.stoppedEarly = true }
            case .changedWhileReading(let failure):
                s.summary.skipped.append(failure)
            case .gone(let held):
                s.summary.removed += 1
                if !held { s.summary.removedWithoutEntries += 1 }
            case .fatal(let error):
                // Its source was not baked: counted with those not attempted, not nowhere (a
                // full disk's "18 found: 14 decoded, 3 not attempted").
                s.done -= 1
                s.fatal = s.fatal ?? error
                s.stop = true
            }
        }
        bakeState.commit(ifAtLeast: options.stateBatch)
        if case .failed(let failure) = result { options.failed?(failure) }
        report(force: false)
    }

    /// How many sources a worker should have outstanding now: ``depth``, less towards the end, so
    /// that the last sources are shared among workers rather than queued behind one (a queue of
    /// large photos at the end would keep one worker busy while the others stand idle).
    private func ahead() -> Int {
        let remaining = state.withLock { jobs.count - $0.next }
        return min(depth, max(1, remaining / (2 * max(1, options.jobs))))
    }

    /// The next source: one to send again first, then the plan's next, unless the bake stops
    /// (an error, `--strict`, or an interruption: those already sent are finished).
    private func nextJob(again: inout [BakePlan.Job]) -> BakePlan.Job? {
        let interrupted = options.interruption?.requested()
        return state.withLock { s in
            if let interrupted, !s.stop {
                s.fatal = s.fatal ?? interrupted
                s.stop = true
            }
            guard !s.stop else { return nil }
            if let job = again.popLast() { return job }
            guard s.next < jobs.count else { return nil }
            defer { s.next += 1 }
            return jobs[s.next]
        }
    }

    private func report(force: Bool) {
        guard let progress = options.progress else { return }
        let snapshot: BakeProgress? = state.withLock { s in
            let now = Date()
            guard force || now.timeIntervalSince(s.lastProgress) >= 0.1 else { return nil }
            s.lastProgress = now
            return BakeProgress(done: s.done, total: jobs.count, failed: s.summary.failed.count, elapsed: now.timeIntervalSince(started),
                                inStage: now.timeIntervalSince(renderStarted.withLock { $0 }))
        }
        if let snapshot { progress(snapshot) }
    }
}

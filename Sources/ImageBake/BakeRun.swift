import Foundation
import ImageManifest
import ImageTableCore
import Synchronization

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
        case fatal(BakeError)
    }

    struct State {
        var next = 0
        var jobID = 0
        var done = 0
        var summary = BakeSummary()
        var fatal: BakeError?
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
    let state = Mutex(State())

    init(manifest: Manifest, tables: [BakeTable], items: [Item], options: BakeOptions, started: Date) {
        self.manifest = manifest
        self.tables = tables
        self.items = items
        self.options = options
        self.started = started
        familyTables = manifest.families.map { family in tables.indices.filter { tables[$0].planned.family == family.name } }
    }

    /// Runs every item; returns the summary counts and any fatal error.
    func execute() -> (summary: BakeSummary, fatal: BakeError?) {
        DispatchQueue.concurrentPerform(iterations: max(1, min(options.jobs, items.count))) { _ in dispatch() }
        var fatal = state.withLock { $0.fatal }
        for table in tables {
            do { try table.publishPending() } catch let error as BakeError { fatal = fatal ?? error } catch {}
        }
        report(force: true)
        return state.withLock { ($0.summary, fatal) }
    }

    private func dispatch() {
        var worker: WorkerProcess?
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

    private func process(_ item: Item, worker: inout WorkerProcess?) -> Result {
        let family = manifest.families[item.family]
        func failed(_ code: String, _ message: String) -> Result {
            .failed(SourceFailure(family: family.name, key: item.source.key, path: item.source.path, code: code, message: message))
        }
        let fingerprint: UUID
        do {
            fingerprint = try SourceFingerprint.uuid(contentsOf: item.source.path).uuid
        } catch let error as TableError {
            return failed("unreadable", error.message)
        } catch {
            return failed("unreadable", "\(error)")
        }
        let stale = familyTables[item.family].filter { !tables[$0].isFresh(key: item.source.key, source: fingerprint) }
        if stale.isEmpty { return .unchanged }
        if options.dryRun { return .decoded(1) }

        var reserved: [(table: Int, reservation: SlotReservation)] = []
        func abandonAll() { reserved.forEach { tables[$0.table].abandon($0.reservation) } }
        do {
            for t in stale { reserved.append((t, try tables[t].reserve(key: item.source.key, source: fingerprint))) }
            if worker == nil { worker = try WorkerProcess(command: options.workerInvocation) }
        } catch {
            abandonAll()
            return .fatal(error as? BakeError ?? BakeError(.tableUnavailable, "\(error)"))
        }
        let job = WorkerProtocol.Job(
            id: state.withLock { s in s.jobID += 1; return s.jobID }, source: item.source.path,
            members: reserved.map { r in
                WorkerProtocol.Member(table: tables[r.table].planned.path, parametersHash: tables[r.table].hashHex,
                                      slot: r.reservation.slot, generation: r.reservation.generation, spec: tables[r.table].spec)
            })
        switch worker!.run(job, timeout: options.timeout) {
        case .lost(let failure):
            abandonAll()
            worker = nil
            let losses = state.withLock { s in s.consecutiveLosses += 1; return s.consecutiveLosses }
            if losses >= 3 && state.withLock({ $0.summary.decoded == 0 }) {
                return .fatal(BakeError(.workerFailed, "worker processes keep failing before baking anything: \(failure.message)",
                                        path: options.workerCommand.first))
            }
            return failed(failure.code, failure.message)
        case .reply(let reply):
            state.withLock { $0.consecutiveLosses = 0 }
            guard reply.failure == nil, let rects = reply.rects, rects.count == reserved.count else {
                abandonAll()
                let f = reply.failure ?? .init(code: "render-failed", message: "the worker returned no result", cause: nil)
                return failed(f.code, f.cause.map { "\(f.message) (\($0))" } ?? f.message)
            }
            do {
                for (r, rect) in zip(reserved, rects) {
                    var reservation = r.reservation
                    reservation.contentRect = rect
                    try tables[r.table].enqueue(reservation)
                }
            } catch {
                return .fatal(error as? BakeError ?? BakeError(.tableUnavailable, "\(error)"))
            }
            return .decoded(reply.decodes)
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

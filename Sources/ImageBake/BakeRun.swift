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
        case fatal(ImageTableError)
    }

    struct State {
        var next = 0
        var jobID = 0
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
    let state = Mutex(State())

    init(manifest: Manifest, tables: [BakeTable], items: [Item], options: BakeOptions, started: Date) {
        self.manifest = manifest
        self.tables = tables
        self.items = items
        self.options = options
        self.started = started
        familyTables = manifest.families.map { family in tables.indices.filter { tables[$0].format.family == family.name } }
    }

    /// Runs every item; returns the summary counts and any fatal error.
    func execute() -> (summary: BakeSummary, fatal: ImageTableError?) {
        DispatchQueue.concurrentPerform(iterations: max(1, min(options.jobs, items.count))) { _ in dispatch() }
        var fatal = state.withLock { $0.fatal }
        for table in tables {
            do { try table.publishPending() } catch let error as ImageTableError { fatal = fatal ?? error } catch {}
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
        func failed(_ code: ImageTableError.Code, _ message: String, cause: String? = nil) -> Result {
            .failed(SourceFailure(family: family.name, error: ImageTableError(code, message, path: item.source.path,
                                                                                 key: item.source.key, cause: cause)))
        }
        func failed(_ failure: WorkerProtocol.Failure) -> Result {
            failed(ImageTableError.Code(rawValue: failure.code) ?? .protocolError, failure.message, cause: failure.cause)
        }
        let fingerprint: UUID
        do {
            fingerprint = try SourceFingerprint.uuid(contentsOf: item.source.path).uuid
        } catch {
            return failed(.unreadable, error.message)
        }
        let stale = familyTables[item.family].filter { !tables[$0].isFresh(key: item.source.key, source: fingerprint) }
        if stale.isEmpty { return .unchanged }
        if options.dryRun { return .decoded(1) }

        // Slots first without evicting: a source that fails to decode must not cost an entry.
        var reserved: [Int: SlotReservation] = [:]
        func abandonAll() { reserved.forEach { tables[$0.key].abandon($0.value) } }
        do {
            for t in stale { reserved[t] = try tables[t].reserve(key: item.source.key, source: fingerprint, evicting: false) }
            if worker == nil { worker = try WorkerProcess(command: options.workerInvocation) }
        } catch {
            abandonAll()
            return .fatal(error as? ImageTableError ?? ImageTableError(.io, "\(error)"))
        }
        let job = WorkerProtocol.Job(source: item.source.path, members: stale.map { t in
            WorkerProtocol.Member(format: tables[t].format, target: reserved[t].map { tables[t].target($0) })
        })
        switch send(WorkerProtocol.Request(id: nextRequestID(), render: job), to: &worker) {
        case .failure(let failure):
            abandonAll()
            return failed(failure)
        case .fatal(let error):
            abandonAll()
            return .fatal(error)
        case .success(let reply):
            let rects = reply.rects ?? []
            // Decoded: now full tables may evict, and the worker places what it held back.
            let held = stale.filter { reserved[$0] == nil }
            if !held.isEmpty {
                var targets: [WorkerProtocol.SlotTarget] = []
                do {
                    for t in held {
                        let r = try tables[t].reserve(key: item.source.key, source: fingerprint, evicting: true)!
                        reserved[t] = r
                        targets.append(tables[t].target(r))
                    }
                } catch {
                    abandonAll()
                    return .fatal(error as? ImageTableError ?? ImageTableError(.io, "\(error)"))
                }
                switch send(WorkerProtocol.Request(id: nextRequestID(), place: targets), to: &worker) {
                case .success: break
                case .failure(let failure):
                    abandonAll()
                    return failed(failure)
                case .fatal(let error):
                    abandonAll()
                    return .fatal(error)
                }
            }
            do {
                for (t, rect) in zip(stale, rects) {
                    var reservation = reserved[t]!
                    reservation.contentRect = rect
                    try tables[t].enqueue(reservation)
                }
            } catch {
                return .fatal(error as? ImageTableError ?? ImageTableError(.io, "\(error)"))
            }
            return .decoded(reply.decodes)
        }
    }

    /// The answer to one request, sorted into what the caller does next.
    enum Answer {
        case success(WorkerProtocol.Reply)
        /// The source failed (or the worker died on it; it has been replaced).
        case failure(WorkerProtocol.Failure)
        case fatal(ImageTableError)
    }

    private func nextRequestID() -> Int { state.withLock { s in s.jobID += 1; return s.jobID } }

    /// Sends a request, replacing a worker that died, and gives up on the whole bake when workers
    /// keep dying before anything was baked (a missing or broken worker executable).
    private func send(_ request: WorkerProtocol.Request, to worker: inout WorkerProcess?) -> Answer {
        switch worker!.send(request, timeout: options.timeout) {
        case .lost(let failure):
            worker = nil
            let losses = state.withLock { s in s.consecutiveLosses += 1; return s.consecutiveLosses }
            if losses >= 3 && state.withLock({ $0.summary.decoded == 0 }) {
                return .fatal(ImageTableError(.workerUnavailable, "worker processes keep failing before baking anything: \(failure.message)",
                                              path: options.workerCommand.first))
            }
            return .failure(failure)
        case .reply(let reply):
            state.withLock { $0.consecutiveLosses = 0 }
            if let failure = reply.failure { return .failure(failure) }
            if request.render != nil, reply.rects?.count != request.render?.members.count {
                return .failure(.init(code: "render-failed", message: "the worker returned no result", cause: nil))
            }
            return .success(reply)
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

import Foundation
import ImageManifest
import ImageTableCore
import WorkerProtocol

/// One source's round trip through a worker: slots reserved and the request sent
/// (``BakeRun/send(_:worker:busyParts:behind:)``), then the answer placed
/// (``BakeRun/receive(_:reply:worker:)``). Between the two, the worker may be rendering the
/// source before it, so each outstanding source has scratch memory of its own (its `part`).
extension BakeRun {
    /// A source sent to a worker and not yet answered.
    struct Outstanding {
        let job: BakePlan.Job
        /// Its slots, reserved without evicting.
        var write: FamilyWrite
        let members: Int
        let submitted: WorkerConnection.Submitted
        /// Which part of the worker's scratch memory it uses.
        let part: Int
        /// When it was sent: its bytes were read after (a failure is remembered with this time).
        let sentNs: Int64
    }

    /// What sending a source came to.
    enum Sending {
        case sent(Outstanding)
        /// Nothing was sent, and the source is settled: a fatal error, or a worker lost with
        /// nothing else outstanding.
        case done(Result)
        /// Not sent, and sent again later: the worker is gone, with sources before this one
        /// outstanding (their answers say how), or what is outstanding leaves no room for it.
        case sendAgain
    }

    /// The source UUID of slots reserved before the worker has said which bytes it decoded
    /// (replaced then; a constant, since a random UUID per job costs reads of /dev/urandom).
    private static let unknownSource = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Reserves `job`'s slots and sends it to `worker`, starting one if there is none.
    ///
    /// - Parameters:
    ///   - job: the source.
    ///   - worker: the dispatcher's worker; `nil` after it is lost.
    ///   - busyParts: the parts of the worker's scratch memory the outstanding sources use (fewer
    ///     than the worker's ``BakeWorker/depth``).
    ///   - behind: how many sources are outstanding before this one.
    func send(_ job: BakePlan.Job, worker: inout BakeWorker?, busyParts: [Int], behind: Int) -> Sending {
        do throws(ImageTableError) {
            if worker == nil { worker = try BakeWorker(executable: options.workerExecutable, tables: catalogue,
                                                      scratchBytes: scratchBytes, depth: depth, memoryLimit: options.workerMemoryLimit) }
        } catch {
            return .done(.fatal(error))  // every other source would fail the same way
        }
        let part = (0..<worker!.depth).first { !busyParts.contains($0) }!
        let scratch = worker!.scratchMemory(part: part)
        // Slots first without evicting: a source that fails to decode must not cost an entry, and
        // a key's previous image stays until the new one is ready.
        var write: FamilyWrite
        do throws(ImageTableError) {
            write = try FamilyWrite(key: job.source.key, sourceUUID: Self.unknownSource, tables: job.tables.map { tables[$0] },
                                    scratch: scratch.memory)
        } catch {
            return .done(.fatal(error))
        }
        let members = zip(job.tables, write.destinations).map { t, destination in
            RenderMember(table: t, destination: Self.wire(destination, scratchOffset: scratch.offset))
        }
        let planned = familyTables[job.family].filter { !job.tables.contains($0) }
        let family = manifest.families[job.family]
        let request = RenderJob(source: job.source.path, members: members, limits: options.limits(failOn: family.failOn), planned: planned)
        let sentNs = FileStat.now
        switch worker!.connection.submit(.render(request)) {
        case .sent(let submitted):
            return .sent(Outstanding(job: job, write: write, members: members.count, submitted: submitted, part: part, sentNs: sentNs))
        case .noRoom:
            write.abandon()
            return .sendAgain
        case .lost(let loss):
            write.abandon()
            if behind > 0 { return .sendAgain }
            // It died with nothing to do (after its last reply): this source never reached it.
            // Sent again to a new worker, unless workers keep dying so.
            let losses = countLoss(loss, of: &worker, working: false)
            return losses < 3 ? .sendAgain : .done(lost(loss, job: job, losses: losses))
        }
    }

    /// The `outside-sources` failure of a source the worker read through a symbolic link that
    /// leads outside the family's sources, made after the scan (which refuses such a link): the
    /// worker opens the path as it is then, so a file swapped for a link between the scan and
    /// the read baked pixels from anywhere, exit 0. Only a file other than the one scanned is
    /// looked at, so the common case costs a comparison.
    private func leadsOutside(_ read: SourceStat, _ scanned: SourceFile, family: Manifest.Family) -> ImageTableError? {
        guard !options.allowOutsidePaths, read.device != scanned.stat.device || read.inode != scanned.stat.inode,
              let root = SourceScanner.realPath(family.sourcesPath) else { return nil }
        guard let target = SourceScanner.realPath(scanned.path) else { return nil }
        guard PathBytes.isBelow(target, root) else {
            return ImageTableError(.outsideSources, "symbolic link leads outside the sources directory (it became one while the bake ran); "
                                   + "not baked", path: scanned.path, key: scanned.key)
        }
        return nil
    }

    /// Places what the worker answered for `source`, or reports why it failed.
    ///
    /// - Parameters:
    ///   - source: the oldest outstanding source.
    ///   - reply: the worker's answer, or how it was lost.
    ///   - worker: the dispatcher's worker; set to `nil` when it is lost or misbehaves.
    func receive(_ source: Outstanding, reply: Swift.Result<WorkerReply, WorkerConnection.Loss>, worker: inout BakeWorker?) -> Result {
        let family = manifest.families[source.job.family]
        let key = source.job.source.key, path = source.job.source.path
        var write = source.write
        func failed(_ error: ImageTableError) -> Result { .failed(SourceFailure(family: family.name, error: error)) }
        switch reply {
        case .failure(let loss):
            write.abandon()
            return lost(loss, job: source.job, losses: countLoss(loss, of: &worker, working: true))
        case .success(.failed(let failure)):
            write.abandon()
            // The worker answered: whatever failed, it was the source, not the worker.
            let nothingBaked = state.withLock { s in
                s.consecutiveLosses = 0
                s.consecutiveTimeouts = 0
                return s.summary.decoded == 0
            }
            // While nothing is baked (when losses in a row may stop the bake), a later timeout's
            // CPU is counted from here, not with the failures this worker answered before.
            if nothingBaked { worker?.connection.markCPU() }
            var error = failure.error(path: path, key: key)
            if error.code == .changedWhileReading { return .changedWhileReading(SourceFailure(family: family.name, error: error)) }
            if error.code == .unreadable && FileStat(path: path) == nil { return .gone(held: source.job.status != .new) }
            // Out of the worker's memory: said so, and not remembered (``WorkerMemoryShortage``).
            if let limit = options.workerMemoryLimit, WorkerMemoryShortage.isShortage(error.cause) {
                error = WorkerMemoryShortage.explained(error, limit: limit, certain: true)
                return failed(error)
            }
            bakeState.rememberFailure(of: source.job.source, settings: failureSettings[source.job.family], checkedNs: source.sentNs, error: error)
            return failed(error)
        case .success(.rendered(let rendered)) where rendered.contentRects.count == source.members:
            state.withLock { $0.consecutiveLosses = 0; $0.consecutiveTimeouts = 0 }
            guard let fingerprint = SourceFingerprint.uuid(parsing: rendered.fingerprint) else {
                write.abandon()
                return failed(ImageTableError(.protocolError, "the worker sent no fingerprint", path: path, key: key))
            }
            if let outside = leadsOutside(rendered.stat, source.job.source, family: family) {
                write.abandon()
                return failed(outside)
            }
            // Decoded: now full tables may evict, and what was drawn in scratch memory is placed,
            // under the fingerprint of the very bytes the worker decoded. Those members are
            // copied into their slots here, through the mapping (unless staged); the worker
            // wrote the others itself.
            let copiedHere = write.destinations.map { if case .scratch = $0 { true } else { false } }
            do throws(ImageTableError) {
                let placed = try write.complete(contentRects: rendered.contentRects.map {
                    PixelRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height)
                }, sourceUUID: fingerprint, pixelChecksums: rendered.pixelChecksums)
                for ((t, reservation), copied) in zip(zip(source.job.tables, placed), copiedHere) {
                    // The modification time of the bytes decoded: `imagetable merge` ranks
                    // entries by it, as the plan ranks sources.
                    var reservation = reservation
                    reservation.sourceModifiedNs = rendered.stat.modifiedNs
                    try tables[t].enqueue(reservation, mappedHere: copied && !reservation.isStaged)
                }
            } catch {
                return .fatal(error)
            }
            let s = rendered.stat
            bakeState.remember(source.job.source, BakeState.FileRecord(
                stat: FileStat(device: s.device, inode: s.inode, size: s.size, modifiedNs: s.modifiedNs, changedNs: s.changedNs),
                fingerprint: fingerprint, checkedNs: s.readNs, tables: []))
            bakeState.forgetFailure(of: source.job.source, settings: failureSettings[source.job.family])
            if !rendered.warnings.isEmpty {
                state.withLock { $0.summary.warnings += rendered.warnings.map { BakeWarning(path: path, message: PrintableText.escaped($0), code: nil) } }
            }
            return .decoded(rendered.decodes)
        case .success(let other):
            write.abandon()
            worker?.connection.stop()
            worker = nil
            return failed(ImageTableError(.protocolError, "the worker answered a render request with \(other)", path: path, key: key))
        }
    }

    /// Drops a lost worker and counts the loss; returns the losses in a row (a reply resets it).
    ///
    /// A worker stopped at the timeout that spent a quarter of it or more (and 0.1 s at least: the
    /// system counts CPU time in hundredths) on the CPU since its handshake, or its last answered
    /// failure while nothing was baked, was decoding (a worker waiting for a file system spends
    /// next to nothing): a source that costs more than the timeout (an animated WebP of 100,000
    /// frames took two minutes), the source's failure as a decode error is, which neither counts
    /// nor resets the losses. Three such files listed first stopped the whole bake as if the file
    /// system did not answer. (A quarter: a decoding worker on a loaded machine gets a share of a
    /// core.)
    ///
    /// A worker that died working on a source, by a signal that ends a failed allocation, while a
    /// memory limit held it, is that source's failure too (``WorkerMemoryShortage``); one that died
    /// with nothing to do (`working` false) always counts.
    private func countLoss(_ loss: WorkerConnection.Loss, of worker: inout BakeWorker?, working: Bool) -> Int {
        defer { worker = nil }
        if case .timedOut(let seconds) = loss, let cpu = worker?.connection.cpuSecondsSinceMark, cpu >= max(seconds / 4, 0.1) {
            return 0
        }
        if working, WorkerMemoryShortage.mayBeShortage(loss, limit: options.workerMemoryLimit) { return 0 }
        return state.withLock { s in
            s.consecutiveLosses += 1
            if case .timedOut = loss { s.consecutiveTimeouts += 1 } else { s.consecutiveTimeouts = 0 }
            return s.consecutiveLosses
        }
    }

    /// A worker lost while working on `job`, the `losses`th in a row: the source's failure, or the
    /// bake's when workers keep failing before anything is baked.
    private func lost(_ loss: WorkerConnection.Loss, job: BakePlan.Job, losses: Int) -> Result {
        if losses >= 3 && state.withLock({ $0.summary.decoded == 0 }) {
            if case .timedOut(let seconds) = loss, state.withLock({ $0.consecutiveTimeouts >= losses }) {
                // Not the worker's fault as far as anyone can tell: a timeout too short for any
                // source, or sources that cannot be read (a mount that does not answer).
                return .fatal(ImageTableError(.timedOut, "stopped the bake: \(losses) sources in a row took longer than the "
                                              + "timeout (--timeout \(WorkerConnection.Loss.seconds(seconds))) and nothing has "
                                              + "been baked yet; is the timeout too short, or is the file system not answering?",
                                              path: job.source.path, key: job.source.key))
            }
            return .fatal(ImageTableError(.workerUnavailable, "worker processes keep failing before baking anything: \(loss)",
                                          path: options.workerExecutable))
        }
        let family = manifest.families[job.family]
        var error = loss.error(path: job.source.path, key: job.source.key)
        if let limit = options.workerMemoryLimit, WorkerMemoryShortage.mayBeShortage(loss, limit: limit) {
            error = WorkerMemoryShortage.explained(error, limit: limit, certain: false)
        }
        return .failed(SourceFailure(family: family.name, error: error))
    }

    /// A destination as the worker protocol names it: scratch offsets count from the start of
    /// the memory the worker maps, not of the part this source uses.
    private static func wire(_ destination: FamilyWrite.Destination, scratchOffset: Int) -> Destination {
        switch destination {
        case .slot(let r): .slot(slot: r.slot, generation: r.generation)
        case .scratch(let offset): .scratch(offset: scratchOffset + offset)
        }
    }
}

import Foundation
import ImageManifest
import ImageTableCore

/// Runs a bake: lock, scan, diff, plan, execute, commit (`docs/BAKE.md`).
///
/// 1. **Lock**: open every table of the manifest for writing, which takes their writer locks, so
///    a second bake of them waits here.
/// 2. **Scan**: list each family's sources, after the locks are held, so a file deleted while a
///    bake waited is simply not there.
/// 3. **Diff**: `stat` each source once; read only those whose stat the bake state does not trust
///    and whose key a table holds ("changed?"), and peek at new ones ("an image?").
/// 4. **Plan**: decide, per table, what is written, evicted, pruned and left out, before
///    touching any (``BakePlanner``). A dry run stops here.
/// 5. **Execute**: prune, record the new times of kept entries whose sources were touched
///    without changing (records only), then have worker processes decode each source to write
///    once for its family (``BakeRun``), evicting only the entries the plan chose and only once
///    a source has decoded.
/// 6. **Commit**: record what was read in the bake state.
///
/// The parent process never decodes (it does not even start libvips). Each worker drives libvips
/// from one thread, so the liborc race described in `docs/PIPELINE.md` cannot occur, and a decoder
/// crash costs one source, not the bake.
public enum Baker {
    /// Bakes `manifest`.
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - options: jobs, limits, strictness, dry run, pruning, worker executable.
    /// - Returns: the summary, with the plan it followed; sources that failed are listed in it,
    ///   not thrown.
    /// - Throws: ``ImageTableError`` when the bake cannot go on, with the code of what stopped it:
    ///   a table that cannot be opened or written (`locked`, `no-space`, `insecure-file`…), a
    ///   sources directory that is missing (`sources-unreadable`), workers that cannot start
    ///   (`worker-unavailable`, `worker-mismatch`), the state (`corrupt`…), or under `--strict` the
    ///   first failed source (`source-failed`).
    public static func bake(_ manifest: Manifest, options: BakeOptions) throws(ImageTableError) -> BakeSummary {
        let summary = try bakeReportingStop(manifest, options: options)
        if let stop = summary.stoppedBy { throw stop }
        return summary
    }

    /// Bakes `manifest` as ``bake(_:options:)`` does, but returns the summary of a bake that
    /// stopped once it had begun writing (`--strict`, or an error such as a full disk during
    /// the run), with ``BakeSummary/stoppedBy`` set, rather than throwing: what was baked before
    /// is committed, and a report shows it.
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - options: jobs, limits, strictness, dry run, pruning, worker executable.
    /// - Returns: the summary.
    /// - Throws: as ``bake(_:options:)``, for what stops a bake before it writes any entry
    ///   (an invalid output directory, a table that cannot be opened, a scan that fails).
    public static func bakeReportingStop(_ manifest: Manifest, options: BakeOptions) throws(ImageTableError) -> BakeSummary {
        let started = Date()
        var clock = PhaseClock()
        let cpuBefore = BakeCPU.now()
        // Before anything is made: a bake that stopped at its scan left the output directory,
        // empty tables, their locks and a state, which `export` then shipped as a success.
        for family in manifest.families { try SourceScanner.checkRoot(family.sourcesPath) }
        // A worker that is not there: said before the output directory, empty tables, their
        // locks and a state are made (a missing sources directory makes nothing either).
        // Only for a first bake: one with nothing to decode never starts a worker.
        if !options.dryRun, !FileManager.default.fileExists(atPath: manifest.outputPath), access(options.workerExecutable, X_OK) != 0 {
            let reason = String(cString: strerror(errno))
            throw ImageTableError(.workerUnavailable, "cannot run the worker \(options.workerExecutable): \(reason); imagetable-worker "
                                  + "must be installed next to imagetable", path: options.workerExecutable)
        }
        if !options.dryRun, let unwritable = unwritableOutput(manifest) {
            return try bakeOnReadOnlyFileSystem(manifest, because: unwritable, options: options)
        }
        if !options.dryRun {
            do throws(ImageTableError) {
                try Directories.make(manifest.outputPath)
            } catch {
                let failure = Directories.failure(error, making: "the output directory", path: manifest.displayOutput)
                // As a bake says of an output directory that exists and may not be written, or
                // lies on a read-only file system.
                guard error.code == .permissionDenied || error.errno == EROFS else { throw failure }
                throw ImageTableError(.notWritable, failure.message, path: failure.path, errno: failure.errno)
            }
        }
        // What a shard's marker records of the manifest: made once, and only for a shard.
        let splitIdentity = options.shard.map { _ in ShardMarker.splitIdentity(of: manifest) }
        // Before any table is opened (a rebuild or an upgrade is a write): one shard a directory.
        if FileManager.default.fileExists(atPath: manifest.outputPath) {
            do {
                try ShardMarker.claim(manifest.outputPath, for: options.shard, manifest: splitIdentity, write: !options.dryRun)
            } catch {
                throw error.at(manifest.displayOutput)
            }
        }
        // The tables' locks, then the claims, then the writers: a bake that waited for another's
        // locks checks the record that bake left (two bakes of one table at once both passed the
        // check, and the second rebuilt the table the first had just written).
        let locks = try manifest.formats.map { format throws(ImageTableError) -> TableLock? in
            guard !options.dryRun else { return nil }
            do throws(ImageTableError) {
                return try TableLock(tablePath: manifest.tablePath(of: format), format: format, timeout: options.lockTimeout)
            } catch {
                throw error.at(manifest.displayPath(of: format))
            }
        }
        try TableClaims.check(manifest, identity: manifestIdentity(manifest))
        let tables = try zip(manifest.formats, locks).map { pair throws(ImageTableError) -> BakeTable in
            try BakeTable(pair.0, of: manifest, options: options, adopting: pair.1)
        }
        defer { tables.forEach { $0.close() } }
        // The state is opened once the tables' locks are held, so two bakes of one manifest never
        // open or write it at once.
        let state = try BakeState(directory: manifest.outputPath, root: manifest.directory, readOnly: options.dryRun)
        defer { state.close() }
        clock.lap(\.open)
        for table in tables { table.explainRebuild(previous: state.parameters(ofTable: table.format.fileName)) }

        var prepared = try BakePreparation(manifest, tables: tables, state: state, options: options, started: started, clock: &clock)
        for (table, replacing) in zip(tables, prepared.replacing) { table.noteRedraws(planned: replacing) }
        let plan = prepared.plan, vanished = prepared.vanished

        var summary = BakeSummary()
        // What stopped the run part-way (a full disk, a table's I/O error): the entries written
        // before it are committed, and the summary says so, where it said nothing happened.
        var stopped: ImageTableError?
        // `--strict` stops at the first failure: one known before decoding (an empty file, a
        // decode that failed at an earlier bake) stops the bake before any source is sent, and
        // a dry run says so as the bake would.
        let failsFirst = options.strict && (prepared.scanFailures + plan.failures).contains { !$0.isSkip }
        if !options.dryRun {
            TestHook.run("planned")
            for ((table, change), replacing) in zip(zip(tables, plan.tables), prepared.replacing) {
                try table.prune(change.prunes)
                table.plan(evictions: change.evictions, replacing: replacing)
                if !change.writes.isEmpty { table.preallocate(entries: change.entriesAfter) }
            }
            for (table, retimes) in zip(tables, prepared.retimes) { try table.retime(retimes) }
            for table in tables { try table.adoptFamilyTag() }
            prepared.retimes = []  // a key and a time per entry touched: not carried through the run
            let run = BakeRun(manifest: manifest, tables: tables, jobs: failsFirst ? [] : plan.jobs, options: options, state: state,
                              failureSettings: prepared.failureSettings, started: started)
            let outcome = run.execute()
            summary = outcome.summary
            summary.stoppedEarly = summary.stoppedEarly || failsFirst
            summary.stoppedBeforeDecoding = failsFirst
            if failsFirst { summary.notAttempted = plan.jobs.count }
            clock.lap(\.render)
            let owner = manifestIdentity(manifest)
            state.setDirectory(SourceScanner.realPath(manifest.outputPath) ?? manifest.outputPath)
            for table in tables {
                state.setParameters(ofTable: table.format.fileName, table.format.canonicalParameters)
                state.setManifest(ofTable: table.format.fileName, owner)
            }
            // Rows of removed files left for the next bake cost nothing but their space, and a
            // state that cannot be read now fails the commit below, which says so. When the scan
            // listed every file the state knew, none is gone: the pass over every row (a twentieth
            // of an unchanged re-bake) is skipped.
            if !prepared.nothingToForget { try? forgetRemoved(plan, manifest: manifest, state: state) }
            do throws(ImageTableError) {
                try state.commit()
            } catch {
                // What stopped the run (a full disk, say) is the bake's error, not the state's
                // failing the same way after it: the state is a cache, and the next bake rereads.
                stopped = error
            }
            clock.lap(\.commit)
            stopped = outcome.fatal ?? stopped
            // A shard's marker names the manifest its tables were baked from only once a bake
            // of it has run to the end: until then it says the change is pending.
            if let shard = options.shard, let splitIdentity, stopped == nil, !summary.stoppedEarly {
                try? ShardMarker.settle(manifest.outputPath, for: shard, manifest: splitIdentity)
            }
        } else if failsFirst {
            summary.stoppedEarly = true
            summary.stoppedBeforeDecoding = true
            summary.notAttempted = plan.jobs.count
        } else {
            summary.decoded = plan.jobs.count
        }
        summary.removed += vanished.unheld
        summary.removedWithoutEntries += vanished.unheld
        summary.phases = clock.phases
        summary.cpu = BakeCPU.since(cpuBefore)
        summary = finish(summary, plan: plan, scanFailures: prepared.scanFailures, vanished: vanished.found, tables: tables, manifest: manifest, options: options,
                         started: started)
        // A family whose pattern matches nothing (`*.jpeg` over `.jpg` files) baked nothing and
        // said nothing, and its empty tables shipped green. A shard may hold none of a family's
        // sources, when its directory holds other shards': said only when it holds no one's (an
        // unmounted directory, whose empty shard `merge` would take with the rest).
        // A file skipped for its extension's spelling is not a source: the family still has none.
        let found = Set((prepared.scanFailures + plan.failures + plan.skipped).filter { $0.error.code != .extensionSpelling }.map(\.family))
        for family in manifest.families where (plan.planned.first { $0.name == family.name }?.count ?? 0) == 0 && !found.contains(family.name)
            && !plan.sourcedByOtherShards.contains(family.name) {
            summary.warnings.append(BakeWarning(path: manifest.file, message: family.noSourcesMessage, code: "no-sources",
                                                line: family.sourcesLocation.line, column: family.sourcesLocation.column))
        }
        summary.warnings += prepared.outputWarnings
        summary.warnings += pruneWithheld(manifest, tables: tables, plan: plan, dryRun: options.dryRun)
        // A cache lost, not a failure: said, since the next bakes read every source again.
        summary.warnings += state.notices.map { BakeWarning(path: "\(manifest.displayOutput)/\(BakeState.fileName)", message: $0.message, code: $0.code) }
        if let stopped {
            // A run that wrote nothing at all (no worker could start, or one from another
            // build) has nothing to report: the error alone says it, as before the run.
            let wroteNothing = summary.decoded == 0 && summary.failed.isEmpty && summary.removed == 0
                && summary.tables.allSatisfy { $0.written == 0 && $0.evicted == 0 && $0.pruned == 0 }
            if wroteNothing { throw stopped }
            // Nothing more is touched (orphan tables stay) after a bake that could not finish.
            summary.stoppedBy = stopped
            summary.stoppedEarly = true
            return summary
        }
        handleOrphans(manifest, state: state, options: options, into: &summary)
        if options.strict, let first = summary.failed.first {
            let known = summary.stoppedBeforeDecoding && summary.failed.count > 1
                ? "\(summary.failed.count) sources are known to fail, the first " : ""
            summary.stoppedBy = ImageTableError(.sourceFailed, "\(known)\(first.key): \(first.error.message) [\(first.error.code.rawValue)]; "
                                                + "--strict stops the bake\(known.isEmpty ? "" : " before decoding")", path: first.path,
                                                key: first.key, cause: first.error.cause)
            // The summary's last line says so (a dry run that found a known failure exited 1
            // with no word of why, once the stop's own line no longer repeated the failure).
            summary.stoppedEarly = true
        }
        return summary
    }

    /// The summary's counts from the plan and what the run did.
    private static func finish(_ run: BakeSummary, plan: BakePlan, scanFailures: [SourceFailure], vanished: Int, tables: [BakeTable],
                               manifest: Manifest, options: BakeOptions, started: Date) -> BakeSummary {
        var summary = run
        summary.plan = plan
        summary.dryRun = options.dryRun
        summary.pruning = options.prune
        summary.shard = options.shard
        summary.unchanged = plan.unchanged
        summary.leftOut = plan.leftOut
        summary.deferred = plan.deferred
        summary.removed += plan.removedCount
        let failures = scanFailures + plan.failures
        summary.failed = (failures.filter { !$0.isSkip } + summary.failed).sorted { ($0.family, $0.key) < ($1.family, $1.key) }
        summary.skipped = (failures.filter(\.isSkip) + summary.skipped).sorted { ($0.family, $0.key) < ($1.family, $1.key) }
        summary.sourcesFound = plan.sourceCount + scanFailures.count + vanished
        summary.keptPrevious = summary.failed.filter { failure in
            // An ambiguous name's key is the kept file's, as the plan compares keys.
            failure.error.code != .ambiguousName && [.changed, .unchanged].contains(plan.status(family: failure.family, key: failure.key))
        }.count
        var warnedFormats = Set<[String]>()
        summary.warnings = zip(tables, plan.tables).compactMap { table, change in
            // The plan's own count: slots kept for keys the scan could not see leave fewer.
            // On the family in the manifest, where `maximumCount` is raised (and where GitHub can
            // show an annotation: it showed none on a table, which is no file of the repository).
            // Named as `validate` names it, the format, once for all its scales' tables, which
            // share its `maximumCount`.
            let family = manifest.families.first { $0.name == table.format.family }
            guard !change.leftOut.isEmpty, family?.cappedFormats.contains(table.format.name) != true,
                  warnedFormats.insert([table.format.family, table.format.name]).inserted else { return nil }
            let out = change.leftOut.count
            return BakeWarning(path: manifest.file, message: "family '\(table.format.family)' has \(change.candidates) sources but format "
                + "'\(table.format.name)' holds \(change.capacity) (maximumCount); the \(out) least recently modified "
                + "\(out == 1 ? "is" : "are") left out (see docs/BAKE.md)", code: "more-sources-than-slots",
                line: family?.location.line, column: family?.location.column)
        } + summary.warnings
        summary.tables = zip(tables, plan.tables).map { table, change in
            let c = table.counts.withLock { $0 }
            var s = TableSummary(path: table.displayPath, format: table.format.name, scale: table.format.scale, capacity: table.format.capacity)
            // A dry run of a bake that `--strict` would stop before decoding: it would prune,
            // and write and evict nothing.
            let stopsFirst = options.dryRun && summary.stoppedBeforeDecoding
            s.written = options.dryRun ? (stopsFirst ? 0 : change.writes.count) : c.written
            s.evicted = options.dryRun ? (stopsFirst ? 0 : change.evictions.count) : c.evicted
            s.pruned = options.dryRun ? change.prunes.count : c.pruned
            s.leftOut = change.leftOut.count
            s.entries = options.dryRun ? (stopsFirst ? max(0, table.entryCount - change.prunes.count) : change.entriesAfter) : table.entryCount
            s.reset = table.notices.contains { $0.kind == .reset }
            s.notices = table.notices.map(\.message)
            s.noticeGroups = NoticeGroup.grouping(table.notices)
            return s
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// A `prune-withheld` warning per family whose `--prune` the plan held back, as it listed
    /// no source at all (``BakePlan/TableChange/pruneWithheld``), on its `sources` line.
    private static func pruneWithheld(_ manifest: Manifest, tables: [BakeTable], plan: BakePlan, dryRun: Bool) -> [BakeWarning] {
        manifest.families.compactMap { family in
            let held = zip(tables, plan.tables).filter { $0.0.format.family == family.name && $0.1.pruneWithheld }
            guard !held.isEmpty else { return nil }
            let entries = held.reduce(0) { $0 + $1.1.gone.count }
            let paths = held.map { $0.0.displayPath }.joined(separator: ", ")
            return BakeWarning(path: manifest.file, message: "family '\(family.name)' lists no source in '\(family.sources)', so --prune "
                + "\(dryRun ? "would delete" : "deleted") none of the \(entries) \(entries == 1 ? "entry" : "entries") of its tables: an "
                + "unmounted or emptied sources directory would have emptied them; to empty them on purpose, delete \(paths)",
                code: "prune-withheld", line: family.sourcesLocation.line, column: family.sourcesLocation.column)
        }
    }

    /// The manifest as the bake state names it: its real path.
    static func manifestIdentity(_ manifest: Manifest) -> String {
        SourceScanner.resolvedPath(manifest.file)
    }

    /// Drops the state's records of files under a family's sources that the bake no longer
    /// finds: the scan did not list them, or they vanished before the diff read them.
    private static func forgetRemoved(_ plan: BakePlan, manifest: Manifest, state: BakeState) throws(ImageTableError) {
        // Each known path under a family's sources directory is looked up by its key in the
        // family's sorted sources, rather than building every source's path. A file that
        // vanished during the bake is not listed: it is forgotten too.
        let roots = manifest.families.map { family in
            (family: family, planned: plan.planned.first { $0.name == family.name }, root: state.relative(family.sourcesPath) + "/")
        }
        var removed: [String] = []
        try state.forEachKnownPath { path in
            var under = false, present = false, unselected = false
            for (family, planned, root) in roots {
                guard let rest = PathBytes.remainder(path, after: root) else { continue }
                let key = String(rest)
                // A file no family of this manifest takes may be another manifest's (other
                // patterns over the same directory, one output directory): its row is kept while
                // the file is there. Forgetting it made each of two such bakes read the other's
                // files again at every bake.
                guard family.selects(key) || family.selectsHiddenImage(key) else { unselected = true; continue }
                under = true
                present = present || planned?.status(of: key).map { $0 != .removed } == true
            }
            if under && !present {
                removed.append(path)
            } else if unselected && !under && FileStat(path: state.absolute(path)) == nil {
                removed.append(path)  // gone: no one's source
            }
        }
        for path in removed { state.forget(path: path) }
    }
}

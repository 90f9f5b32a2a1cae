import Foundation
import ImageManifest
import ImageTableCore

/// The part of a bake before any table changes: scan each family, snapshot its tables, diff the
/// sources against the state, and plan (`Baker`'s steps 2 to 4).
///
/// It is a function of its own so that what only planning needs (the scan's lists, the tables'
/// snapshots, the diff's sources) is freed when it returns, before the run: a bake of a million
/// sources would otherwise carry each of them, per source, to its end.
struct BakePreparation {
    /// The plan.
    let plan: BakePlan
    /// Per table, the keys it held that the plan writes again (``BakeTable/plan(evictions:replacing:)``).
    let replacing: [Set<String>]
    /// Per table, the entries the plan keeps whose sources' times moved, with those times
    /// (``BakePlanner/retimes(of:in:change:)``); empty unless sources were touched. The bake
    /// empties it once applied, before the run.
    var retimes: [BakePlanner.Retimes]
    /// Files the scans skipped or could not list.
    let scanFailures: [SourceFailure]
    /// `output-holds-sources`: images a family's patterns select in the output directory, which
    /// lies inside its sources and is never scanned, so they are silently not baked otherwise.
    let outputWarnings: [BakeWarning]
    /// Files deleted since the listing: all of them, and those no table held (a held key's removal
    /// is in the plan's listing already; a new one's is counted as the worker's `.gone` is).
    let vanished: (found: Int, unheld: Int)
    /// Whether the scans listed every file the bake state knew (``SourceDiff/Trusted``) and none
    /// vanished: then no file is gone and the state has nothing to forget.
    let nothingToForget: Bool
    /// Per family, what a failed decode is remembered with (``BakeState/failureSettings(of:tables:options:)``):
    /// the diff looked failures up with it, and the run records them with it.
    let failureSettings: [String]

    /// Scans, diffs and plans `manifest` against its open `tables` and `state`.
    ///
    /// - Parameters:
    ///   - manifest: the manifest.
    ///   - tables: its tables, open, in the order of its formats.
    ///   - state: the bake state.
    ///   - options: the bake's options.
    ///   - started: when the bake started, for its progress reports.
    ///   - clock: charged with the scan, the diff and the plan.
    /// - Throws: ``ImageTableError`` when a family's sources cannot be listed.
    init(_ manifest: Manifest, tables: [BakeTable], state: BakeState, options: BakeOptions, started: Date,
         clock: inout PhaseClock) throws(ImageTableError) {
        var plan: BakePlan
        let listsEveryKnownFile: Bool
        failureSettings = BakeState.failureSettings(of: manifest, tables: tables, options: options)
        (plan, replacing, retimes, scanFailures, outputWarnings, vanished, listsEveryKnownFile) = try Self.prepare(manifest, tables: tables, state: state,
                                                                                                   options: options, settings: failureSettings,
                                                                                                   stages: StageProgress(options.progress, started: started),
                                                                                                   clock: &clock)
        nothingToForget = listsEveryKnownFile && vanished.found == 0
        // Now that the scan's lists, the diff's and the tables' entries are freed: the run keeps
        // only what its jobs need.
        plan.compact()
        self.plan = plan
    }

    private static func prepare(_ manifest: Manifest, tables: [BakeTable], state: BakeState, options: BakeOptions, settings: [String],
                                stages: StageProgress, clock: inout PhaseClock) throws(ImageTableError)
        -> (BakePlan, [Set<String>], [BakePlanner.Retimes], [SourceFailure], [BakeWarning], (found: Int, unheld: Int), Bool) {
        var scanned: [[SourceFile]] = []
        var scanFailures: [SourceFailure] = []
        var outputWarnings: [BakeWarning] = []
        var unlisted: [[String]] = []
        // A shard's bake sees only its own sources: every other key is no source of its, and
        // is reported by no warning of its. The scan and the planner ask the same question.
        let shard = options.shard
        let selectors = manifest.families.map { family in { @Sendable (key: String) in family.selects(key) && shard?.contains(key: key) != false } }
        // Whether a family's scan met a file its patterns take that another shard bakes: the
        // directory is not empty, though this shard has no source in it (`--prune` goes on).
        let otherShards = manifest.families.map { _ in AdaptiveMutex(false) }
        stages.begin(.listing)
        TestHook.run("listing")
        for (f, (family, selects)) in zip(manifest.families, selectors).enumerated() {
            let listedBefore = scanned.reduce(0) { $0 + $1.count }
            let elsewhere = otherShards[f]
            let counted: @Sendable (String) -> Bool
            if shard == nil {
                counted = selects
            } else {
                counted = { key in
                    if selects(key) { return true }
                    if family.selects(key) { elsewhere.withLock { $0 = true } }
                    return false
                }
            }
            let scanner = SourceScanner(root: family.sourcesPath, allowOutside: options.allowOutsidePaths, excluding: manifest.outputPath,
                                        selectsHidden: { family.selectsHiddenImage($0) && shard?.contains(key: $0) != false },
                                        otherSpelling: { key in
                                            // Not when another family over these sources takes it (one
                                            // family for '*.JPG', one for '*.jpg').
                                            guard shard?.contains(key: key) != false, !manifest.families.contains(where: {
                                                $0.sourcesPath == family.sourcesPath && $0.selects(key)
                                            }) else { return nil }
                                            return family.selectedSpelling(of: key)
                                        },
                                        listed: { stages.update(done: listedBefore + $0) },
                                        mayHoldSources: { family.mayHoldSources(below: $0) },
                                        selects: counted)
            let found = try scanner.scanAll()
            scanned.append(found.sources)
            unlisted.append(found.unlisted)
            // A directory's problem is found by every shard's scan: one shard, the key's, says it.
            let reported = shard.map { shard in found.skipped.filter { !found.directories.contains($0.key ?? "") || shard.contains(key: $0.key ?? "") } }
            scanFailures += (reported ?? found.skipped).map { SourceFailure(family: family.name, error: $0) }
            if found.inExcluded.count > 0 {
                outputWarnings.append(BakeWarning(
                    path: manifest.file, message: family.outputHoldsSourcesMessage(output: manifest.displayOutput, found: found.inExcluded),
                    code: "output-holds-sources", line: family.sourcesLocation.line, column: family.sourcesLocation.column))
            }
        }
        clock.lap(\.scan)
        stages.begin(.checking)
        TestHook.run("checking")
        let diff = SourceDiff(state: state, decoding: options.decoding, rehash: options.rehash, jobs: options.jobs, stages: stages,
                              stateBatch: options.stateBatch)
        // Per table, what it held: a view of its family's `FamilyHeld`.
        var held = Array(repeating: HeldEntries?.none, count: tables.count)
        // Per family, its tables' indices, ascending.
        let owned = manifest.families.map { family in tables.indices.filter { tables[$0].format.family == family.name } }
        var diffed: [SourceDiff.Family]
        let vanished: (found: Int, unheld: Int)
        let listsEveryKnownFile: Bool
        do {
            // Before the tables' entries are read: the state's known files are freed by then.
            let trusted = diff.trust(scanned)
            listsEveryKnownFile = trusted.listsEveryKnownFile
            var withHeld: [SourceDiff.Scanned] = []
            for f in manifest.families.indices {
                // The tables' keys share the scan's strings: one string per key, not one per table.
                let familyHeld = FamilyHeld(owned[f].map { tables[$0] }, sharing: scanned[f])
                for (i, t) in owned[f].enumerated() { held[t] = familyHeld.table(i) }
                withHeld.append(SourceDiff.Scanned(sources: scanned[f], held: familyHeld, failureSettings: settings[f]))
            }
            // The diff's sources share the scan's lists of files: dropped here and below, they
            // are the only holders, so nothing after copies a list.
            scanned.removeAll()
            diffed = diff.run(withHeld, trusted: trusted)
            // Every present source's failure was looked up: the others' files are gone.
            state.forgetUnseenFailures(families: zip(manifest.families, settings).map { family, settings in
                (root: SourceScanner.realPath(family.sourcesPath) ?? family.sourcesPath, settings: settings)
            })
            vanished = (found: diffed.map(\.vanished.count).reduce(0, +),
                        unheld: zip(diffed, withHeld).map { d, s in d.vanished.filter { !s.held.holds($0.key) }.count }.reduce(0, +))
        }
        clock.lap(\.diff)
        if let minAge = options.minAge {
            // Clamped: an infinite or NaN age from the API would trap in the conversion.
            let seconds = minAge.isNaN ? 0 : min(max(minAge, 0), BakeOptions.maximumMinAge)
            let youngest = FileStat.now - Int64(seconds * 1e9)
            // In place: the planner shares these arrays rather than holding a copy of every source.
            for f in diffed.indices {
                for i in diffed[f].sources.indices where diffed[f].sources.files[i].stat.modifiedNs > youngest {
                    diffed[f].sources.deferSource(i)
                }
            }
        }
        let families = manifest.families.enumerated().map { f, family in
            // No file left has a vanished file's key: the scan keeps one file of names that
            // are equal as strings (`ambiguous-name`).
            BakePlanner.Family(name: family.name, sources: diffed[f].sources,
                               tables: owned[f].map { BakePlanner.Table(index: $0, capacity: tables[$0].format.capacity, entries: held[$0]!) },
                               vanished: Set(diffed[f].vanished.map(\.key)), unlisted: unlisted[f], selects: selectors[f],
                               otherShardsHaveSources: otherShards[f].withLock { $0 })
        }
        let plan = BakePlanner(prune: options.prune).plan(families, tableCount: tables.count)
        let replacing = zip(plan.tables, held).map { change, held in Set(change.writes.lazy.filter { held?[$0] != nil }) }
        var retimes = Array(repeating: BakePlanner.Retimes(), count: tables.count)
        for family in families {
            var previous: BakePlanner.Retimes = []
            for table in family.tables {
                let found = BakePlanner.retimes(of: table, in: family, change: plan.tables[table.index])
                // Tables of a family usually keep the same entries, touched alike: one list, shared.
                let same = found.count == previous.count && zip(found, previous).allSatisfy { $0 == $1 }
                retimes[table.index] = same ? previous : found
                previous = retimes[table.index]
            }
        }
        clock.lap(\.plan)
        return (plan, replacing, retimes, scanFailures, outputWarnings, vanished, listsEveryKnownFile)
    }
}

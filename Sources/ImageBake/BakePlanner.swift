import Foundation
import ImageManifest
import ImageTableCore

/// Computes a ``BakePlan`` from what the scan and the diff found and what the tables held when
/// the bake began (read beforehand, ``FamilyHeld``). Pure: no file is read or written here.
///
/// The rules (`docs/BAKE.md`, "The plan"), per table of each family:
/// 1. **Selection.** The table's capacity `C` goes to the family's present sources, most recently
///    modified first, ties by key: the first `C` are *selected*, the rest *left out*. A source
///    that fails before decoding competes only for a slot its key already holds (it keeps its
///    last good entry). The order depends on the files alone, never on `--jobs` or timing, so an
///    unchanged over-full family is a no-op.
/// 2. **Writes.** A selected source is written unless the table holds its key from the same
///    bytes. A changed key replaces its own entry; a new key needs a slot.
/// 3. **Pruning.** With `--prune`, entries whose source is gone are deleted; their slots are the
///    first reused.
/// 4. **Evictions.** New keys take free slots first; when there are too few, entries that are not
///    selected (sources gone or left out) are evicted, least recently used first, ties by key.
///    A selected source's entry is never evicted: every present source counts as used before
///    any eviction is chosen.
struct BakePlanner {
    /// Why a source cannot be baked, found before decoding: boxed, since few sources have one.
    final class Failure: Sendable {
        let error: ImageTableError
        init(_ error: ImageTableError) { self.error = error }
    }

    /// A table as the planner sees it.
    struct Table {
        /// Its index in the plan.
        let index: Int
        let capacity: Int
        /// Its entries: key → source UUID and recency.
        let entries: HeldEntries
    }

    /// A family: its sources and tables.
    struct Family {
        let name: String
        let sources: Sources
        let tables: [Table]
        /// Keys the scan listed whose files were gone when the diff read them (rare): not
        /// among ``sources``, though the tables' entries say the scan found them.
        var vanished: Set<String> = []
        /// Directories below the sources that the scan could not list, and links it could not
        /// follow (sorted keys): whether the files there are there is unknown.
        var unlisted: [String] = []
        /// Whether the family's patterns (and the shard) take a key: a key they exclude is no
        /// source, below an unlisted directory or not.
        var selects: (String) -> Bool = { _ in true }
        /// Whether the scan met files of the family that other shards bake.
        var otherShardsHaveSources = false

        /// Whether the source of a key a table holds is present: the scan found it, and it did
        /// not vanish before the diff.
        func isPresent(_ held: (key: String, scanned: Bool)) -> Bool {
            held.scanned && (vanished.isEmpty || !vanished.contains(held.key))
        }

        /// Whether a key is a link the scan could not follow or lies below a directory it could
        /// not list: its entry is kept as it is, neither gone (pruned, counted removed) nor
        /// evicted, as a source that fails before decoding keeps its last good entry.
        func isUnlisted(_ key: String) -> Bool {
            !unlisted.isEmpty && unlisted.contains { key.hasPrefix($0) && [nil, UInt8(ascii: "/")].contains(key.utf8.dropFirst($0.utf8.count).first) }
                && selects(key)
        }
    }

    let prune: Bool

    func plan(_ families: [Family], tableCount: Int) -> BakePlan {
        var plan = BakePlan()
        plan.tables = Array(repeating: BakePlan.TableChange(), count: tableCount)
        plan.families = families.map(\.name)
        for (familyIndex, family) in families.enumerated() {
            // A source is left out of the family when every table leaves it out.
            var leftOutEverywhere: Set<String>?
            var changes: [BakePlan.TableChange] = []
            for table in family.tables {
                let change = planTable(table, family)
                leftOutEverywhere = leftOutEverywhere.map { $0.intersection(change.leftOut) } ?? Set(change.leftOut)
                plan.tables[table.index] = change
                changes.append(change)
            }
            let (jobTables, writers) = Self.writers(of: family, changes: changes, tableCount: tableCount)
            let removed = Set(family.tables.flatMap { $0.entries.keys.filter { !family.isPresent($0) && !family.isUnlisted($0.key) }.map(\.key) })
                .sorted()
            let sources = family.sources
            // What `bake --list` says of each source is what the bake does with it: a source
            // deferred by `--min-age`, or that no table gives a slot, is listed as such.
            let statuses = sources.indices.map { i -> BakePlan.SourceStatus in
                if sources.isDeferred(i) { return .deferred }
                // `leftOutEverywhere` is nil for a family without tables: nothing is left out.
                if sources.failure(i) == nil, writers[i] == 0,
                   leftOutEverywhere?.contains(sources.files[i].key) ?? false { return .leftOut }
                return status(of: i, in: family)
            }
            let planned = PlannedFamily(index: familyIndex, name: family.name, files: sources.files,
                                        statuses: statuses, removed: removed, tableLists: jobTables)
            plan.planned.append(planned)
            if family.otherShardsHaveSources { plan.sourcedByOtherShards.insert(family.name) }
            // Sized for what comes rather than grown by doubling: it holds an element per source
            // to decode for the rest of the bake. Geometric still, so many families cost no copies.
            Self.makeRoom(in: &plan.jobs, for: writers.count { $0 != 0 })
            for i in sources.indices {
                let key = sources.files[i].key
                if sources.isDeferred(i) {
                    plan.deferred += 1
                } else if let failure = sources.failure(i) {
                    plan.failures.append(SourceFailure(family: family.name, error: failure.error.at(sources.files[i].path, key: key)))
                } else if writers[i] != 0 {
                    // Changed when some table holds the key, from whatever bytes.
                    plan.jobs.append(BakePlan.Job(planned, position: i, list: Int(writers[i]), status: planned.statuses[i] == .new ? .new : .changed))
                } else if planned.statuses[i] == .leftOut {
                    plan.leftOut += 1
                } else {
                    plan.unchanged += 1
                }
            }
        }
        return plan
    }

    /// Which of the family's tables write each source: per source, an index into the distinct
    /// lists of tables (0, the empty list: none), which the jobs share rather than each holding
    /// an array of its own.
    ///
    /// Each table's writes are sorted by key, as the family's sources are (the scan's order), so
    /// a cursor per table walks them beside the sources: four bytes a source, where a map from
    /// every written key to its list held a hash table of them all.
    private static func writers(of family: Family, changes: [BakePlan.TableChange], tableCount: Int) -> (lists: [[Int]], bySource: [Int32]) {
        var lists: [[Int]] = [[]]
        var extended: [Int: Int] = [:]
        var cursors = Array(repeating: 0, count: changes.count)
        var bySource = [Int32](repeating: 0, count: family.sources.count)
        for (i, file) in family.sources.files.enumerated() {
            var list = 0
            for (t, table) in family.tables.enumerated() {
                let writes = changes[t].writes
                while cursors[t] < writes.count && writes[cursors[t]] < file.key { cursors[t] += 1 }
                guard cursors[t] < writes.count && writes[cursors[t]] == file.key else { continue }
                // Tables come in ascending index order, so each list is sorted as it grows.
                let step = list * tableCount + table.index
                if let to = extended[step] {
                    list = to
                } else {
                    lists.append(lists[list] + [table.index])
                    extended[step] = lists.count - 1
                    list = lists.count - 1
                }
            }
            bySource[i] = Int32(list)
        }
        return (lists, bySource)
    }

    /// Makes room in `array` for `count` more elements: exactly, or at least twice the capacity
    /// when the array already holds some.
    private static func makeRoom<Element>(in array: inout [Element], for count: Int) {
        let needed = array.count + count
        if array.capacity < needed { array.reserveCapacity(array.isEmpty ? needed : max(needed, 2 * array.capacity)) }
    }

    /// One table's part of the plan.
    private func planTable(_ table: Table, _ family: Family) -> BakePlan.TableChange {
        var change = BakePlan.TableChange()
        change.capacity = table.capacity
        let aliases = table.entries.aliases
        change.entriesBefore = table.entries.count + aliases.count
        // Sorted as indices, not copies: a plan of a million sources would otherwise hold a
        // second copy of every source per table while it sorts.
        let sources = family.sources, files = sources.files
        // Entries below a directory the scan could not list hold their slots: the others share
        // what is left.
        let unlisted = family.unlisted.isEmpty ? 0 : table.entries.keys.count { family.isUnlisted($0.key) }
        let capacity = table.capacity - unlisted
        let candidates = sources.indices
            .filter { sources.isBakeable($0) || table.entries[files[$0].key] != nil }
            .sorted { (files[$0].stat.modifiedNs, files[$1].key) > (files[$1].stat.modifiedNs, files[$0].key) }
        change.candidates = candidates.count
        change.leftOut = candidates.dropFirst(capacity).map { files[$0].key }.sorted()
        var newKeys = 0
        for i in candidates.prefix(capacity) where sources.isBakeable(i) {
            guard let entry = table.entries[files[i].key] else {
                change.writes.append(files[i].key)
                newKeys += 1
                continue
            }
            if entry.source != sources.fingerprint(i) {
                change.writes.append(files[i].key)
                change.replaced += 1
            }
        }
        change.writes.sort()
        // An entry whose source is present is a candidate (the table holds its key), so it is
        // selected unless left out: the unselected entries are those of absent sources and of
        // those left out, with no set of the selected keys.
        let leftOut = Set(change.leftOut)
        var unselected: [String] = [], gone: [String] = []
        for held in table.entries.keys {
            if !family.isPresent(held) {
                if family.isUnlisted(held.key) { continue }
                unselected.append(held.key)
                gone.append(held.key)
            } else if leftOut.contains(held.key) {
                unselected.append(held.key)
            }
        }
        gone.sort()
        // A family with no source to bake is more likely an unmounted or emptied directory (a
        // cron job's NFS mount; one placeholder file that is no image) than every source deleted
        // on purpose: pruning then emptied every table, exit 0. A shard with none of the
        // family's sources, whose directory holds other shards', prunes as usual.
        if prune {
            let noSource = !family.otherShardsHaveSources && !sources.indices.contains { sources.isBakeable($0) }
            if noSource && !gone.isEmpty { change.pruneWithheld = true } else { change.prunes = gone }
        }
        let remaining = table.entries.count - change.prunes.count
        let needed = max(0, newKeys - (table.capacity - remaining))
        let pruned = Set(change.prunes)
        change.evictions = unselected.filter { !pruned.contains($0) }
            .sorted { (table.entries[$0]!.recency, $0) < (table.entries[$1]!.recency, $1) }
            .prefix(needed).map { $0 }
        let evicted = Set(change.evictions)
        change.gone = gone.filter { !pruned.contains($0) && !evicted.contains($0) }
        change.entriesAfter = remaining - change.evictions.count + newKeys
        // Removed whatever `--prune` says: the plan cannot keep an entry it cannot tell from
        // another key's. Added last, since the sets above would take an alias for that key.
        change.prunes += aliases
        return change
    }

    private func status(of i: Int, in family: Family) -> BakePlan.SourceStatus {
        let holders = family.tables.compactMap { $0.entries[family.sources.files[i].key] }
        guard !holders.isEmpty else { return .new }
        return holders.allSatisfy({ $0.source == family.sources.fingerprint(i) }) ? .unchanged : .changed
    }
}

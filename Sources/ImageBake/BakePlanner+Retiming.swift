import ImageManifest

extension BakePlanner {
    /// Keys with the source modification time their entries should record.
    typealias Retimes = [(key: String, sourceModifiedNs: Int64)]

    /// The entries of `table` that the plan keeps as they are although their source's
    /// modification time moved (a `touch`, a copy, a CI cache restore: new times over the same
    /// bytes), each with the time the scan found: the bake records it in their records
    /// (``BakeTable/retime(_:)``), pixels untouched.
    ///
    /// Why: the plan ranks sources by their current time, and `imagetable merge` ranks entries
    /// by the time their records hold. An entry left with the time of its first bake ranked
    /// otherwise in a merge of shards than its source does in one bake, and an over-full merge
    /// could keep another source in its place.
    ///
    /// An entry is retimed when its source is present, neither failed nor deferred
    /// (`--min-age` leaves a source, time included, to a later bake), has the bytes the entry
    /// was made from, and the plan does not evict it. Entries the plan writes get the time as
    /// they are written; entries it prunes keep theirs.
    ///
    /// An entry the plan keeps although its source is gone (no `--prune`) records no time (0):
    /// a bake never selects such an entry, it only stays while its slot is not needed, and a
    /// merge of shards ranks it after every present source, as one bake would (it ranked by
    /// the time its source had, so an over-full merge could keep it over a present source). A
    /// source that comes back with the same bytes gets its time again.
    ///
    /// - Parameters:
    ///   - table: the table, with what it held when the bake began.
    ///   - family: its family's sources.
    ///   - change: the table's part of the plan.
    /// - Returns: keys with their sources' times, in slot order, then the kept entries of gone
    ///   sources with 0 (the core passes over those that record 0 already); empty when no kept
    ///   entry's time moved and no source is gone (one search of the family's sources per
    ///   entry whose time did).
    static func retimes(of table: Table, in family: Family, change: BakePlan.TableChange) -> Retimes {
        let moved = table.entries.retimed
        let gone: Retimes = change.gone.map { ($0, 0) }
        guard !moved.isEmpty else { return gone }
        let sources = family.sources, files = sources.files
        let evicted = Set(change.evictions)
        var retimes: Retimes = []
        for key in moved where !evicted.contains(key) {
            // A source that vanished before the diff is no longer among the files.
            let i = files.partitionPoint { $0.key < key }
            guard i < files.count, files[i].key == key, sources.isBakeable(i), let entry = table.entries[key],
                  sources.fingerprint(i) == entry.source else { continue }
            retimes.append((files[i].key, files[i].stat.modifiedNs))
        }
        return retimes + gone
    }
}

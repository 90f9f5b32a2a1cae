import ImageManifest

/// One family as a ``BakePlan`` holds it: its sources' keys and statuses, the keys whose sources
/// are gone, the files its jobs decode, and the distinct lists of tables its jobs write. Every
/// job of the family shares it.
///
/// Why a shared object rather than values per source: a plan of a million sources held a job of
/// 96 bytes per source to decode (a copy of the file) and a listing entry of 40 bytes per source
/// (family name, key, status), sorted through a buffer of half that again, all while the scan's
/// own list was still alive. Here the files are the scan's array itself while the plan is made,
/// so what the plan adds per source is a status byte and, to decode, a 16-byte job. For the run,
/// a family with few sources to decode keeps only theirs (``compacted(jobs:)``): the scan's
/// 72-byte records of every source are freed, its keys kept.
final class PlannedFamily: Sendable {
    /// The family's position in the manifest.
    let index: Int
    /// Its name.
    let name: String
    /// The files its jobs decode, by position: every source (in scan order, sorted by key), or
    /// once compacted, only those of jobs.
    let files: [SourceFile]
    /// Every source's key, once compacted; until then, ``files`` has them.
    private let compactedKeys: [String]?
    /// Each source's status, in key order.
    let statuses: [BakePlan.SourceStatus]
    /// Keys some table of the family holds whose sources are gone, sorted.
    let removed: [String]
    /// The distinct lists of tables the jobs write (indices of ``BakePlan/tables``), ascending.
    let tableLists: [[Int]]

    init(index: Int, name: String, files: [SourceFile], statuses: [BakePlan.SourceStatus], removed: [String], tableLists: [[Int]]) {
        precondition(files.count == statuses.count, "a status per file")
        precondition(files.count <= Int(Int32.max), "a job names its source in 31 bits")
        (self.index, self.name, self.files, self.statuses, self.removed, self.tableLists) = (index, name, files, statuses, removed, tableLists)
        compactedKeys = nil
    }

    private init(_ family: PlannedFamily, files: [SourceFile], keys: [String]) {
        (index, name, statuses, removed, tableLists) = (family.index, family.name, family.statuses, family.removed, family.tableLists)
        (self.files, compactedKeys) = (files, keys)
    }

    /// How many sources the family has.
    var count: Int { statuses.count }

    /// The key of source `i`, in key order.
    func key(_ i: Int) -> String { compactedKeys?[i] ?? files[i].key }

    /// The family with only the files `jobs` decode, and the jobs renumbered into it; or itself
    /// when that saves nothing: a job's file costs 72 bytes, a key 16, so keeping every key and
    /// only the jobs' files is smaller while under half the sources are decoded.
    ///
    /// - Parameter jobs: the family's jobs, in the plan's order (their sources ascending).
    /// - Returns: the family the jobs should share, and the jobs pointing into it.
    func compacted(jobs: ArraySlice<BakePlan.Job>) -> (family: PlannedFamily, jobs: [BakePlan.Job]) {
        guard compactedKeys == nil, 2 * jobs.count < files.count else { return (self, Array(jobs)) }
        let family = PlannedFamily(self, files: jobs.map(\.source), keys: files.map(\.key))
        return (family, jobs.enumerated().map { n, job in job.moved(to: family, position: n) })
    }

    /// The status of `key`: a binary search of the keys, then of the removed keys (both sorted
    /// by key, as the listing is).
    func status(of key: String) -> BakePlan.SourceStatus? {
        let i = (0..<count).partitionPoint { self.key($0) < key }
        if i < count && self.key(i) == key { return statuses[i] }
        let r = removed.partitionPoint { $0 < key }
        return r < removed.count && removed[r] == key ? .removed : nil
    }

    /// The family's part of ``BakePlan/listing``: its sources and removed keys, merged by key.
    func listing() -> [BakePlan.Listed] {
        var listed: [BakePlan.Listed] = []
        listed.reserveCapacity(count + removed.count)
        var r = 0
        for i in 0..<count {
            let key = key(i)
            while r < removed.count && removed[r] < key {
                listed.append(BakePlan.Listed(family: name, key: removed[r], status: .removed))
                r += 1
            }
            listed.append(BakePlan.Listed(family: name, key: key, status: statuses[i]))
        }
        listed += removed[r...].map { BakePlan.Listed(family: name, key: $0, status: .removed) }
        return listed
    }
}

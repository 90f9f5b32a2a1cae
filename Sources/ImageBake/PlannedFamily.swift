import ImageManifest

/// One family as a ``BakePlan`` holds it: the scan's list of files, each one's status, the keys
/// whose sources are gone, and the distinct lists of tables its jobs write. Every job of the
/// family shares it.
///
/// Why a shared object rather than values per source: a plan of a million sources held a job of
/// 96 bytes per source to decode (a copy of the file) and a listing entry of 40 bytes per source
/// (family name, key, status), sorted through a buffer of half that again, all while the scan's
/// own list was still alive. Here the files are the scan's array itself, and what the plan adds
/// per source is a status byte and, to decode, a 16-byte job.
final class PlannedFamily: Sendable {
    /// The family's position in the manifest.
    let index: Int
    /// Its name.
    let name: String
    /// Its sources, in scan order (sorted by key).
    let files: [SourceFile]
    /// Each source's status, beside ``files``.
    let statuses: [BakePlan.SourceStatus]
    /// Keys some table of the family holds whose sources are gone, sorted.
    let removed: [String]
    /// The distinct lists of tables the jobs write (indices of ``BakePlan/tables``), ascending.
    let tableLists: [[Int]]

    init(index: Int, name: String, files: [SourceFile], statuses: [BakePlan.SourceStatus], removed: [String], tableLists: [[Int]]) {
        precondition(files.count == statuses.count, "a status per file")
        precondition(files.count <= Int(UInt32.max), "a job names its source in 32 bits")
        (self.index, self.name, self.files, self.statuses, self.removed, self.tableLists) = (index, name, files, statuses, removed, tableLists)
    }

    /// The status of `key`: a binary search of the files, then of the removed keys (both sorted
    /// by key, as the listing is).
    func status(of key: String) -> BakePlan.SourceStatus? {
        let i = files.partitionPoint { $0.key < key }
        if i < files.count && files[i].key == key { return statuses[i] }
        let r = removed.partitionPoint { $0 < key }
        return r < removed.count && removed[r] == key ? .removed : nil
    }

    /// The family's part of ``BakePlan/listing``: its sources and removed keys, merged by key.
    func listing() -> [BakePlan.Listed] {
        var listed: [BakePlan.Listed] = []
        listed.reserveCapacity(files.count + removed.count)
        var r = 0
        for (file, status) in zip(files, statuses) {
            while r < removed.count && removed[r] < file.key {
                listed.append(BakePlan.Listed(family: name, key: removed[r], status: .removed))
                r += 1
            }
            listed.append(BakePlan.Listed(family: name, key: file.key, status: status))
        }
        listed += removed[r...].map { BakePlan.Listed(family: name, key: $0, status: .removed) }
        return listed
    }
}

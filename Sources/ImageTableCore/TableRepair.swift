/// Clears what ``TableVerifier`` finds wrong in a table, so that the next bake renders those
/// entries again: `imagetable verify --repair`.
///
/// A bake decides what to render from what the tables hold. An entry whose pixels were damaged
/// after it was written still has a sound record naming an unchanged source, so without this a
/// bake would keep it forever. Clearing the record makes the entry absent: readers miss it, and
/// the next bake sees a source that no table holds and renders it.
public enum TableRepair {
    /// Verifies the table at `path` under its writer lock and clears every record with a
    /// problem: pixel checksum mismatches, damaged records, records that claim one entity, and
    /// interrupted writes; the index is rebuilt and the entries counted again. Both are flushed
    /// before the lock is released.
    ///
    /// Holding the lock means no writer can change anything meanwhile, so every finding is
    /// settled; readers in other processes see each record cleared under its seqlock and rescan.
    ///
    /// - Parameters:
    ///   - path: the table file.
    ///   - lockTimeout: seconds to wait for a writer (a bake) to finish.
    /// - Returns: the verification made under the lock; its problems are the records cleared.
    /// - Throws: ``ImageTableError``: `locked` when a writer holds the table past the timeout,
    ///   the errors of opening it (`corrupt` for a damaged header, which the next bake rebuilds;
    ///   `notFound`, `insecureFile`, …), `io` when the flush fails.
    public static func repair(path: String, lockTimeout: Double) throws(ImageTableError) -> TableVerifier.Report {
        // The header's protection gives the lock file its mode, as a writer would create it.
        let protection = try TableFile(path: path, writable: false).header.protection
        let lock = try WriterLock(tablePath: path, permissions: protection.permissions, timeout: lockTimeout)
        defer { lock.release() }
        // Opened again under the lock: a writer may have rebuilt the file meanwhile.
        let file = try TableFile(path: path, writable: true)
        let report = TableVerifier.verify(file, writerMayBeActive: false)
        let damaged = report.problems.filter { $0.code != .damagedIndex }.compactMap(\.slot)
        guard !report.problems.isEmpty else { return report }
        for slot in damaged { file.clearRecord(slot) }
        try file.flush(offset: TableLimits.indexOffset, count: file.scanLimit * TableLimits.recordBytes)
        if file.layout.formatVersion >= 2 {
            // The index is rebuilt from the records left, as a writer opening the table would.
            var state = ImageTableWriter.State(directory: SlotDirectory(capacity: file.layout.capacity), index: IndexWriter(file: file))
            try state.index.allocateActiveAreaWhereHolesFault()
            _ = try ImageTableWriter.openScan(file, state: &state, durable: true)
            // The scan counts the entries again, which mends a stale count, found or not.
            try file.flush(offset: 0, count: TableLimits.headerBytes)
        }
        // What was repaired, with the entries that verify now (an index rebuilt makes entries
        // it did not lead to count again).
        let after = TableVerifier.verify(file, writerMayBeActive: false)
        return TableVerifier.Report(header: report.header, validEntries: after.validEntries, inProgress: after.inProgress,
                                    problems: report.problems)
    }
}

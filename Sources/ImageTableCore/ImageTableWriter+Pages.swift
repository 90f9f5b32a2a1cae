extension ImageTableWriter {
    /// Unmaps the pages of `slots` from this process, with their records' and the hash index
    /// buckets written since the last call; the data stays in the file and the page cache, and
    /// reading the entries again maps it back. For batch writers that publish many entries and
    /// read none of them, so that resident memory stays flat however large the table (a
    /// record's page is 256 bytes an entry, which would otherwise add up); a runtime cache that
    /// reads what it writes has no reason to call it.
    ///
    /// - Parameter slots: slot indices, such as ``WriteOutcome/slot`` or ``SlotReservation/slot``.
    public func releaseMappedPages(slots: [Int]) {
        let l = file.layout
        // A fault on a record maps the 64 KiB around it that the page cache holds ("fault
        // around"), so whole 64 KiB windows of records are dropped, not just their pages.
        var windows = Set<Int>()
        for slot in slots where slot >= 0 && slot < l.capacity {
            file.dropPages(slot: slot)
            windows.insert(l.recordOffset(slot) / 65536)
        }
        let (buckets, passed) = state.withLock { s in
            defer { s.writtenBuckets = [] }
            return (s.writtenBuckets, s.index.takeRecordWindows())
        }
        for offset in buckets { file.dropPages(offset: offset, count: TableLimits.bucketBytes) }
        for window in windows.union(passed) { file.dropPages(offset: window * 65536, count: 65536) }
    }
}

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
        var slotRanges: [(offset: Int, count: Int)] = []
        for slot in slots where slot >= 0 && slot < l.capacity {
            windows.insert(l.recordOffset(slot) / 65536)
            slotRanges.append((l.slotOffset(slot), l.slotStride))
        }
        // Neighbouring slots (a fresh table fills them in order) go in one call: each call
        // costs a TLB shootdown on every CPU that runs one of this process's threads.
        dropRuns(slotRanges, gap: 0)
        let (buckets, passed) = state.withLock { s in
            defer { s.writtenBuckets = [] }
            return (s.writtenBuckets, s.index.takeRecordWindows())
        }
        // Buckets lie where their keys hash, so a batch's are scattered over the index: pages
        // near each other (within the 64 KiB that a fault maps around) go in one call too.
        let page = Int(TableLayout.systemPageSize)
        dropRuns(buckets.map { ($0 / page * page, page) } + windows.union(passed).map { ($0 * 65536, 65536) }, gap: 65536)
    }

    /// Drops the ranges (`offset`, `count`), merging overlapping and adjacent ones and those at
    /// most `gap` bytes apart.
    private func dropRuns(_ ranges: [(offset: Int, count: Int)], gap: Int) {
        var run: (start: Int, end: Int)?
        for (offset, count) in ranges.sorted(by: { $0.offset < $1.offset }) {
            if let r = run, offset <= r.end + gap {
                run = (r.start, max(r.end, offset + count))
                continue
            }
            if let r = run { file.dropPages(offset: r.start, count: r.end - r.start) }
            run = (offset, offset + count)
        }
        if let r = run { file.dropPages(offset: r.start, count: r.end - r.start) }
    }
}

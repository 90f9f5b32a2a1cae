extension ImageTableWriter {
    /// Unmaps the pages of `slots` from this process, with their records, and now and then the
    /// hash index (every 64 buckets touched); the data stays in the file and the page cache, and
    /// reading the entries again maps it back. For batch writers that publish many entries and
    /// read none of them, so that resident memory stays flat however large the table (a
    /// record's page is 256 bytes an entry, which would otherwise add up); a runtime cache that
    /// reads what it writes has no reason to call it.
    ///
    /// - Parameters:
    ///   - slots: slot indices, such as ``WriteOutcome/slot`` or ``SlotReservation/slot``, whose
    ///     pixels and records this process touched.
    ///   - records: more slots whose records alone it touched (their pixels written by another
    ///     process, as a bake's workers write them). Records go by 64 KiB windows, but for the
    ///     one holding the record of the highest slot in use, which new slots are filling.
    public func releaseMappedPages(slots: [Int], records: [Int] = []) {
        let l = file.layout
        // A fault on a record maps the 64 KiB around it that the page cache holds ("fault
        // around"), so whole 64 KiB windows of records are dropped, not just their pages.
        var windows = Set<Int>()
        var slotRanges: [(offset: Int, count: Int)] = []
        for slot in slots where slot >= 0 && slot < l.capacity {
            windows.insert(l.recordOffset(slot) / 65536)
            slotRanges.append((l.slotOffset(slot), l.slotStride))
        }
        for slot in records where slot >= 0 && slot < l.capacity { windows.insert(l.recordOffset(slot) / 65536) }
        // Neighbouring slots (a fresh table fills them in order) go in one call: each call
        // costs a TLB shootdown on every CPU that runs one of this process's threads.
        dropRuns(slotRanges, gap: 0)
        let (touched, passed, highWater) = state.withLock { s in
            defer { if s.bucketsTouched >= Self.bucketsBetweenDrops { s.bucketsTouched = 0 } }
            return (s.bucketsTouched, s.index.takeRecordWindows(), s.directory.highWater)
        }
        // Less the window of the highest slot in use: a writer filling new slots in order
        // writes the next batch's records there, and dropping it after every batch refaulted it
        // again and again.
        var dropped = windows.union(passed)
        if highWater > 0 { dropped.remove(l.recordOffset(min(highWater, l.capacity) - 1) / 65536) }
        dropRuns(dropped.map { ($0 * 65536, 65536) }, gap: 65536)
        // Buckets lie where their keys hash, all over the index, and a fault on one maps the
        // 64 KiB around it wherever the page cache holds them. Unmapping each bucket's window
        // after every batch cost a first bake of 100,000 sources a tenth more time (a call per
        // window, and refaults); unmapping only each written bucket's page left the rest of
        // its window (a re-bake of a thousand changed sources into tables of a million slots
        // kept 38 MB of each). So the whole active area goes, in one call, once every
        // `bucketsBetweenDrops` buckets touched: a few MB of the index stay mapped. (A probe that
        // finds nothing is counted through the bucket publishing then writes, so a writer whose
        // reservations are abandoned, or that probes for victims, may keep up to twice as much.)
        if touched >= Self.bucketsBetweenDrops {
            file.dropBucketArea(file.activeBucketArea)
        }
    }

    /// Buckets touched between two unmappings of the hash index by
    /// ``releaseMappedPages(slots:records:)``: each may have mapped 64 KiB.
    static let bucketsBetweenDrops = 64

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

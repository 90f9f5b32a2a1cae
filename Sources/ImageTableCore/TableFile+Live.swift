import CTableSupport

/// The live part of the header (`docs/FORMAT.md`, "Header", bytes 256 ..< 512): counters that
/// writers update in place and readers treat as hints, and what a scan derives from them.
extension TableFile {
    /// Slots wholly inside the file: `(fileSize − slotsOffset) / slotStride`, at most the capacity.
    var backedSlots: Int {
        min(layout.capacity, max(0, fileSize - layout.slotsOffset) / layout.slotStride)
    }

    /// The records a scan must look at: every record in version 1; in version 2 those a writer
    /// may have used, `min(capacity, max(recordsInUse, backedSlots))`: records are used lowest
    /// first, and `recordsInUse` still covers the records of slots cut off by a truncation.
    var scanLimit: Int {
        guard layout.formatVersion >= 2 else { return layout.capacity }
        let inUse = recordsInUse
        return min(layout.capacity, max(inUse > UInt64(layout.capacity) ? layout.capacity : Int(inUse), backedSlots))
    }

    /// The live header's use counter: takes the next recency stamp.
    func nextClock() -> UInt64 { itc_add_fetch_u64(base + TableHeader.clockOffset, 1) }

    /// Counts a publication or removal, so readers in other processes know to rescan.
    func bumpChangeCount() { _ = itc_add_fetch_u64(base + TableHeader.changeCountOffset, 1) }

    /// The last recency stamp handed out.
    var clock: UInt64 { itc_load_acquire_u64(base + TableHeader.clockOffset) }

    /// The current change count.
    var changeCount: UInt64 { itc_load_acquire_u64(base + TableHeader.changeCountOffset) }

    /// The live header's index selector (version 2): its low bit is the active bucket area, and
    /// every switch to a rebuilt area adds one, so a reader that saw it change retries.
    var indexSelector: UInt64 { itc_load_acquire_u64(base + TableHeader.indexSelectorOffset) }

    /// The bucket area readers probe now, as the header says (version 2).
    var activeBucketArea: Int { Int(indexSelector & 1) }

    /// Unmaps bucket area `area` from this process; it stays in the file and the page cache, and
    /// the next probe maps what it reads back. Probes are scattered over the whole area, and a
    /// fault maps the 64 KiB around it, so writers drop areas whole.
    func dropBucketArea(_ area: Int) {
        dropPages(offset: layout.bucketAreaOffset(area), count: layout.bucketCount * TableLimits.bucketBytes)
    }

    /// The live header's entry count (version 2): what writers last counted.
    var entryCount: UInt64 {
        get { itc_load_acquire_u64(base + TableHeader.entryCountOffset) }
        // Stored only when it changes: a store of the same value still dirties the header's
        // page, and the table's modification time moved at every bake that wrote nothing.
        set { if itc_load_acquire_u64(base + TableHeader.entryCountOffset) != newValue { itc_store_release_u64(base + TableHeader.entryCountOffset, newValue) } }
    }

    /// The live header's count of buckets in use, live or stale, in the active area (version 2).
    var usedBuckets: UInt64 {
        get { itc_load_acquire_u64(base + TableHeader.usedBucketsOffset) }
        set { itc_store_release_u64(base + TableHeader.usedBucketsOffset, newValue) }
    }

    /// The live header's `recordsInUse` (version 2): one more than the highest record a writer
    /// has reserved. It never decreases.
    var recordsInUse: UInt64 {
        get { itc_load_acquire_u64(base + TableHeader.recordsInUseOffset) }
        set { itc_store_release_u64(base + TableHeader.recordsInUseOffset, newValue) }
    }
}

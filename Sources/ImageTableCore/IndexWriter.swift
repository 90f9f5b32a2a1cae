import CTableSupport
import Foundation

/// A writer's side of the hash index (``BucketIndex``): it inserts buckets before their records
/// are committed, allocates the blocks under them first, and rebuilds the index into the other
/// area when stale buckets crowd the active one. Used under the writer lock only.
struct IndexWriter {
    /// Thrown by ``insert(entity:slot:)`` when the active area has neither an empty nor a stale
    /// bucket on the probe path; the caller rebuilds and inserts again.
    struct Crowded: Error {}

    let file: TableFile
    /// Pages of each area whose blocks this writer has allocated (a bit per 4 KiB page).
    private var allocated: [[UInt64]] = [[], []]
    /// How many rebuilds this handle has made (for tests).
    private(set) var rebuilds = 0
    /// The 64 KiB windows of records ``isStale(_:)`` read.
    private var recordWindows = Set<Int>()

    init(file: TableFile) {
        self.file = file
    }

    private var layout: TableLayout { file.layout }

    /// The active area, as the header says.
    var activeArea: Int { file.activeBucketArea }

    /// Whether stale buckets fill more than three quarters of the active area: probes then grow
    /// long, and a rebuild (which keeps only live entries) brings the area back to at most half.
    var isCrowded: Bool { file.usedBuckets > UInt64(layout.bucketCount / 4 * 3) }

    /// Whether the active area leads to `slot` for `entity`: a bucket of the entity's tag and
    /// slot on its probe path before an empty one.
    func leads(to slot: Int, for entity: UUID) -> Bool {
        let target = BucketIndex.bucket(tag: BucketIndex.hash(entity).tag, slot: slot)
        return find(entity, in: activeArea) { $0 == target } != nil
    }

    /// Makes the active area lead to `slot` for `entity`, reusing a stale bucket on the probe path
    /// if there is one, else the empty bucket that ends it.
    ///
    /// - Returns: the file offset of the bucket written, or `nil` when the area already led there.
    /// - Throws: ``Crowded`` when there is no room on the path; an ``ImageTableError`` when the
    ///   bucket's blocks cannot be allocated (a full disk).
    mutating func insert(entity: UUID, slot: Int) throws -> Int? {
        try insert(entity: entity, slot: slot, area: activeArea, fresh: false)
    }

    private mutating func insert(entity: UUID, slot: Int, area: Int, fresh: Bool) throws -> Int? {
        let (home, tag) = BucketIndex.hash(entity)
        let value = BucketIndex.bucket(tag: tag, slot: slot)
        let mask = layout.bucketCount - 1
        var i = Int(truncatingIfNeeded: home) & mask
        var reusable: Int?
        var empty: Int?
        for _ in 0..<layout.bucketCount {
            let bucket = load(area: area, index: i)
            if bucket == 0 {
                empty = i
                break
            }
            if bucket == value { return nil }
            if !fresh && reusable == nil && isStale(bucket) { reusable = i }
            i = (i + 1) & mask
        }
        guard let target = reusable ?? empty else { throw Crowded() }
        let address = file.bucketAddress(area: area, index: target)
        try allocatePage(of: address - file.base, area: area)
        if reusable == nil && !fresh { file.usedBuckets &+= 1 }  // counted first: a kill overcounts
        itc_store_release_u64(address, value.littleEndian)
        return address - file.base
    }

    /// Starts a rebuild into the other area, which it empties (its blocks go back to the file
    /// system). Readers keep probing the active area, undisturbed, until ``finishRebuild(area:count:durable:)``.
    ///
    /// - Returns: the area being rebuilt.
    mutating func beginRebuild() throws(ImageTableError) -> Int {
        let area = 1 - activeArea
        let start = layout.bucketAreaOffset(area), bytes = layout.bucketCount * TableLimits.bucketBytes
        let punched = itc_punch(file.fd, Int64(start), Int64(bytes))
        guard punched == 0 else { throw Posix.error("fallocate (punch hole)", path: file.path, errno: punched) }
        allocated[area] = []
        try allocateWhereHolesFault(area)
        return area
    }

    /// Allocates the whole active area where reading a hole allocates (tmpfs): there, every
    /// probe that reaches a page no bucket was ever stored in, the writer's or a reader's, would
    /// be SIGBUS once the file system is full. Elsewhere a hole reads as zeros and stays one.
    ///
    /// - Throws: `noSpace` when the area does not fit.
    mutating func allocateActiveAreaWhereHolesFault() throws(ImageTableError) {
        try allocateWhereHolesFault(activeArea)
    }

    private mutating func allocateWhereHolesFault(_ area: Int) throws(ImageTableError) {
        if file.holesFault { try allocateWhole(area) }
    }

    /// Adds an entry to the area being rebuilt, unless the area already leads to another
    /// committed record of the same entity: two records claim it, and that record's slot is
    /// returned (the caller drops both: nothing says which is genuine).
    mutating func add(entity: UUID, slot: Int, area: Int) throws(ImageTableError) -> Int? {
        let tag = BucketIndex.hash(entity).tag
        if let rival = find(entity, in: area, where: { bucket in
            guard UInt32(truncatingIfNeeded: bucket >> 32) == tag else { return false }
            let other = Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
            guard other >= 0 && other < layout.capacity else { return false }
            let record = file.record(other)
            return other != slot && record.state == IndexRecord.stateCommitted && record.entityUUID == entity
        }) {
            let bucket = load(area: area, index: rival)
            return Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
        }
        do {
            _ = try insert(entity: entity, slot: slot, area: area, fresh: true)
        } catch let error as ImageTableError {
            throw error
        } catch {
            throw ImageTableError(.corrupt, "the hash index has no room left", path: file.path)
        }
        return nil
    }

    /// Ends a rebuild: makes the new area durable when asked, and only then switches to it
    /// (and makes the switch durable). Readers that probed this area before an earlier switch
    /// see the selector change and look again.
    ///
    /// - Parameters:
    ///   - area: the area from ``beginRebuild()``.
    ///   - count: the buckets it holds.
    ///   - durable: flush before and after the switch.
    mutating func finishRebuild(area: Int, count: Int, durable: Bool) throws(ImageTableError) {
        let start = layout.bucketAreaOffset(area), bytes = layout.bucketCount * TableLimits.bucketBytes
        if durable { try file.flush(offset: start, count: bytes) }
        TestHook.run("index-rebuilt", path: file.path)
        // Switched first, counted after: a kill between leaves the new area counted with the old
        // area's count, an overcount (the next rebuild comes early), where the other order left
        // the old area counted with the new one's, fewer than it uses.
        itc_store_release_u64(file.base + TableHeader.indexSelectorOffset, (file.indexSelector &+ 1).littleEndian)
        file.usedBuckets = UInt64(count)
        TestHook.run("index-switched", path: file.path)
        if durable { try file.flush(offset: 0, count: TableLimits.headerBytes) }
        file.dropBucketArea(area)
        rebuilds += 1
    }

    /// A bucket is stale when the record it leads to is not committed with an entity of its tag,
    /// and no write is in flight there (odd generation): it can be reused without any committed
    /// entry losing its way.
    ///
    /// The buckets an insert passes lead to records anywhere in the index; the 64 KiB windows of
    /// records read are remembered, so that a batch writer can unmap them
    /// (``ImageTableWriter/releaseMappedPages(slots:records:)``) rather than hold the whole index.
    private mutating func isStale(_ bucket: UInt64) -> Bool {
        let slot = Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
        guard slot >= 0 && slot < layout.capacity else { return true }
        if recordWindows.count < 4096 { recordWindows.insert(layout.recordOffset(slot) / 65536) }
        let record = file.record(slot)
        if record.generation & 1 == 1 { return false }
        guard record.state == IndexRecord.stateCommitted else { return true }
        return BucketIndex.hash(record.entityUUID).tag != UInt32(truncatingIfNeeded: bucket >> 32)
    }

    /// The 64 KiB windows of records read since the last call, to unmap.
    mutating func takeRecordWindows() -> Set<Int> {
        defer { recordWindows = [] }
        return recordWindows
    }

    private func find(_ entity: UUID, in area: Int, where match: (UInt64) -> Bool) -> Int? {
        let mask = layout.bucketCount - 1
        var i = Int(truncatingIfNeeded: BucketIndex.hash(entity).home) & mask
        for _ in 0..<layout.bucketCount {
            let bucket = load(area: area, index: i)
            if bucket == 0 { return nil }
            if match(bucket) { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    @inline(__always)
    private func load(area: Int, index: Int) -> UInt64 {
        UInt64(littleEndian: itc_load_relaxed_u64(file.bucketAddress(area: area, index: index)))
    }

    /// Allocates every page of the active area at once when `entries` new entries would touch
    /// most of them anyway (their buckets fall where their keys hash, so a few per page touch
    /// every page): one allocation instead of one per page as buckets are written.
    ///
    /// - Parameter entries: how many entries the writer is about to add.
    /// - Throws: ``ImageTableError`` `noSpace` when the disk cannot hold them.
    mutating func allocateActiveArea(for entries: Int) throws(ImageTableError) {
        guard entries * 2 >= pages(of: activeArea).count else { return }
        try allocateWhole(activeArea)
    }

    /// The 4 KiB pages under `area`: the first one's offset, and how many.
    private func pages(of area: Int) -> (start: Int, count: Int) {
        let start = layout.bucketAreaOffset(area) / 4096 * 4096
        let end = layout.bucketAreaOffset(area) + layout.bucketCount * TableLimits.bucketBytes
        return (start, (end - start + 4095) / 4096)
    }

    /// Allocates every page of `area` in one call, unless this writer already has.
    private mutating func allocateWhole(_ area: Int) throws(ImageTableError) {
        let (start, count) = pages(of: area)
        let words = (count + 63) / 64
        guard !(allocated[area].count >= words && allocated[area].prefix(words).allSatisfy { $0 == ~0 }) else { return }
        try file.allocate(offset: start, count: count * 4096)
        allocated[area] = Array(repeating: ~0, count: words)
    }

    /// Allocates the 4 KiB page under a bucket once per handle and area: the index is a hole
    /// until it is used, and a store into a hole on a full disk would be SIGBUS.
    private mutating func allocatePage(of offset: Int, area: Int) throws(ImageTableError) {
        let page = (offset - pages(of: area).start) / 4096
        let word = page / 64, bit = UInt64(1) << UInt64(page % 64)
        if allocated[area].count <= word { allocated[area] += Array(repeating: 0, count: word + 1 - allocated[area].count) }
        guard allocated[area][word] & bit == 0 else { return }
        try file.allocate(offset: offset / 4096 * 4096, count: 4096)
        allocated[area][word] |= bit
    }
}

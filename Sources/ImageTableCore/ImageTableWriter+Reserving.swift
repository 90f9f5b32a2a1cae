import Foundation

extension ImageTableWriter {
    /// What a write into a full table may replace.
    public enum Eviction: Sendable, Equatable {
        /// Nothing: the key's own slot or a free one, else `full`.
        case none
        /// The least recently used entry (the runtime cache's policy).
        case leastRecentlyUsed
        /// The entry with this key, chosen by the caller (a bake's plan); a free slot is taken
        /// first if there is one.
        case entry(key: String)
    }

    /// Sets a slot aside for `key`: the key's own slot if it has an entry (which the write then
    /// replaces), else a free slot, else one made by `evicting` (the cap is hard: the table never
    /// grows past it).
    ///
    /// The slot is unpublished at once (a kill from here on loses only this key and any evicted
    /// entry) and backed by disk blocks, so filling it cannot fault on a full disk. But for a
    /// staged rewrite of the key's own entry with `.flushed` durability: that entry stays
    /// committed and readable, its slot untouched, until ``publish(_:)`` removes it (readers of a
    /// table a bake re-renders went without the key for a whole batch).
    ///
    /// A caller that does not yet know whether it will have pixels to publish (a bake, before a
    /// source has decoded) passes ``Eviction/none``, so that a source that turns out to be bad never
    /// costs a good entry its place; a bake that planned its evictions names the entry to replace.
    ///
    /// A slot that held an entry must not receive new pixels before the entry's removal is on
    /// disk: after a power cut, the old record over new pixels would serve a torn image. A
    /// reservation that replaces or evicts therefore flushes the record at once, unless `staged`:
    /// then ``SlotReservation/pixels`` is memory of the writer's own, and ``publish(_:)`` makes
    /// every removal of its batch durable with one flush before it copies the pixels in. A bake
    /// stages: one flush per batch instead of one per evicting write and table.
    ///
    /// - Parameters:
    ///   - key: the entry's key, at most 160 UTF-8 bytes.
    ///   - sourceUUID: identifies the source the pixels are made from.
    ///   - evicting: what a full table may replace.
    ///   - staged: give a slot that held an entry pixels in the writer's memory until publishing.
    ///   - replacingOwn: whether the key's own entry may be taken. `false` (a caller that has no
    ///     pixels yet) takes only a free slot, and throws `full` when the key has an entry: it
    ///     stays readable until the caller, pixels in hand, reserves again. Checking first with
    ///     ``contains(key:sourceUUID:)`` is not enough when another writer of this process may publish the
    ///     key in between.
    /// - Returns: the reservation to fill and publish.
    /// - Throws: ``ImageTableError``: `invalidArgument` for a long key, `busy` when the key is already
    ///   being written or every slot is reserved, `full` (``Eviction/none``, or the named entry is
    ///   gone), `noSpace`, `io`, `notWritable` after close.
    public func reserve(key: String, sourceUUID: UUID, evicting: Eviction = .leastRecentlyUsed,
                        staged: Bool = false, replacingOwn: Bool = true) throws(ImageTableError) -> SlotReservation {
        guard key.utf8.count <= TableLimits.maxKeyBytes else {
            throw ImageTableError(.invalidArgument, "key is \(key.utf8.count) UTF-8 bytes; the limit is \(TableLimits.maxKeyBytes)", path: path)
        }
        let entity = EntityKey.uuid(for: key)
        let file = file
        return try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            guard s.pending[entity] == nil else {
                throw ImageTableError(.busy, "a write for key '\(key)' is already in progress", path: path)
            }
            var evictedKey: String?
            let slot: Int
            var replaces = false
            if let own = file.indexedSlot(of: entity) {
                // The probe mapped part of the index, which publishing may not write.
                s.bucketsTouched += 1
                guard replacingOwn else {
                    throw ImageTableError(.full, "the key has an entry, which this write may not take before it has pixels", path: path)
                }
                s.directory.remove(slot: own)
                (slot, replaces) = (own, true)
            } else if case .entry(let victim) = evicting, !s.directory.hasFreeSlot {
                s.bucketsTouched += 1
                // A victim being rewritten (its entry kept readable meanwhile) is not there to take.
                guard s.pending[EntityKey.uuid(for: victim)] == nil, let taken = file.indexedSlot(of: EntityKey.uuid(for: victim)) else {
                    throw ImageTableError(.full, "the table is full and the entry to replace, \(PrintableText.quoted(victim)), is gone", path: path)
                }
                s.directory.remove(slot: taken)
                (slot, evictedKey) = (taken, victim)
            } else if let free = s.directory.takeFreeSlot() {
                do throws(ImageTableError) {
                    try file.ensureBacked(slot: free)
                } catch {
                    s.directory.release(slot: free)
                    throw error
                }
                slot = free
            } else {
                guard evicting != .none else { throw ImageTableError(.full, "the table is full and this write may not evict", path: path) }
                let limit = s.directory.highWater
                let reserved = s.pendingSlots
                guard let victim = s.directory.leastRecentlyUsed(fileRecency: { file.record($0).recency }, committed: {
                    var all: [(slot: Int, recency: UInt64)] = []
                    file.forEachRecord { i in
                        let r = file.record(i)
                        if i < limit && r.generation & 1 == 0 && r.state == IndexRecord.stateCommitted && !reserved.contains(i) {
                            all.append((i, r.recency))
                        }
                    }
                    return all
                }) else {
                    throw ImageTableError(.busy, "every slot is reserved by writes in progress", path: path)
                }
                s.directory.remove(slot: victim)
                evictedKey = file.record(victim).key
                slot = victim
            }
            // Raised 64 records at a time, so that the header it lives in is flushed once per 64
            // new slots rather than with every write to a new slot.
            if UInt64(slot) >= file.recordsInUse { file.recordsInUse = UInt64(min(file.layout.capacity, (slot + 64) / 64 * 64)) }
            let record = file.record(slot)
            let odd = record.nextWriteGeneration
            // The key's own entry, rewritten with staged pixels: it stays readable, untouched,
            // until the publish removes it (``Pending/keepsEntry``).
            let keep = replaces && staged && options.durability == .flushed && record.generation & 1 == 0
                && record.state == IndexRecord.stateCommitted
            let wasPublished = record.state != IndexRecord.stateEmpty
            if !keep {
                record.beginWrite(odd)
                if wasPublished {
                    record.clear()
                    file.bumpChangeCount()
                    file.entryCount = UInt64(s.liveCount)
                }
            }
            // A slot freed by a removal not yet on disk is one that holds an entry, as far as
            // a power cut is concerned.
            let holdsEntry = wasPublished || s.unflushedRemovals.removeValue(forKey: slot) != nil
            let stage = holdsEntry && staged && options.durability == .flushed
            if holdsEntry && !stage && options.durability == .flushed {
                do throws(ImageTableError) {
                    try file.flush(offset: file.layout.recordOffset(slot), count: TableLimits.recordBytes)
                } catch {
                    record.endWrite(odd &+ 1)
                    s.directory.release(slot: slot)
                    throw error
                }
            }
            let l = file.layout
            let staging = stage ? Self.stagingBuffer(l) : nil
            s.pending[entity] = Pending(slot: slot, generation: odd, staging: staging, removalUnflushed: stage, keepsEntry: keep)
            return SlotReservation(
                slot: slot, key: key, entityUUID: entity, sourceUUID: sourceUUID, evictedKey: evictedKey,
                replacesExisting: replaces,
                pixels: UnsafeMutableRawBufferPointer(start: staging?.baseAddress ?? file.slot(slot), count: l.imageBytes),
                width: l.width, height: l.height, bytesPerRow: l.bytesPerRow, style: l.style,
                contentRect: PixelRect(x: 0, y: 0, width: l.width, height: l.height),
                isStaged: staging != nil, generation: odd, owner: ObjectIdentifier(self))
        }
    }

    /// Memory for a staged slot's pixels: ``TableLayout/writtenSlotBytes`` (the image, then zero
    /// padding to the end of a page), so that publishing writes whole pages. A write that ends inside a page makes the file system read that page
    /// from the disk first when it is not cached, and a staged slot held an entry: in a re-bake
    /// whose table's pages left the cache (the next day's cron job), a wait per slot.
    static func stagingBuffer(_ l: TableLayout) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: l.writtenSlotBytes, alignment: 64)
        UnsafeMutableRawBufferPointer(rebasing: buffer[l.imageBytes...]).initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }

    /// Backs the first `slots` slots, their records and the hash index with disk blocks now, in
    /// one allocation each, for a writer that knows how many entries it is about to write (a
    /// bake, from its plan).
    ///
    /// Without it the file grows a few slots at a time as ``reserve(key:sourceUUID:evicting:staged:replacingOwn:)``
    /// takes new ones, each time under the writer's lock and the file system's lock on the file,
    /// which processes writing pixels into the table hold in turn: with many of them, growing
    /// the file while they write stalls every reservation. Slots past `slots` still grow as
    /// before, and a slot never used stays allocated, as a grown file's slots do.
    ///
    /// - Parameter slots: how many slots, from the first, to back (at most the capacity).
    /// - Throws: ``ImageTableError`` `noSpace` when the disk cannot hold them (the file keeps its
    ///   size, and slots grow as before), `notWritable` after close.
    public func preallocate(slots: Int) throws(ImageTableError) {
        try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            try file.ensureBacked(slots: slots)
            try s.index.allocateActiveArea(for: slots)
        }
    }

    /// Gives a reservation's slot back unpublished. Idempotent: a reservation already abandoned
    /// or published is left alone, and so is a newer reservation of the same key, which may
    /// have been given the very slot this one freed.
    ///
    /// - Parameter reservation: a reservation from this table.
    public func abandon(_ reservation: SlotReservation) {
        guard reservation.owner == ObjectIdentifier(self) else { return }
        state.withLock { s in abandon(reservation, in: &s) }
    }

    /// ``abandon(_:)`` with the state locked.
    func abandon(_ reservation: SlotReservation, in s: inout State) {
        // Going by the key alone, a second abandon tore down the newer reservation and freed
        // its slot twice, so two keys could be published into one slot.
        guard isPending(reservation, in: s) else { return }
        if s.pending[reservation.entityUUID]!.pins > 0 {
            s.pending[reservation.entityUUID]!.abandonWhenUnpinned = true
            return
        }
        let pending = s.pending.removeValue(forKey: reservation.entityUUID)!
        let record = file.record(reservation.slot)
        if pending.holdsKeptEntry {
            // Untouched: the old entry stays, back in the LRU order. Its generation still moves
            // on (an empty write under the seqlock), so that the key's next reservation of this
            // slot gets another generation than this one: a second abandon, or a publish, of
            // this reservation must find it gone, not take the next one for it.
            record.rewrite {}
            s.directory.insert(slot: reservation.slot, recency: record.recency)
            pending.staging?.deallocate()
            return
        }
        record.clear()
        record.endWrite(pending.writeGeneration &+ 1)
        if pending.removalUnflushed { s.unflushedRemovals[reservation.slot] = pending.writeGeneration &+ 1 }
        s.directory.release(slot: reservation.slot)
        pending.staging?.deallocate()
    }

    /// Whether `reservation` is still pending: its key's reservation, with its slot and generation.
    func isPending(_ reservation: SlotReservation, in s: State) -> Bool {
        s.pending[reservation.entityUUID].map { $0.slot == reservation.slot && $0.generation == reservation.generation } ?? false
    }
}

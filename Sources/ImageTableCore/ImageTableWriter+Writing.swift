import Foundation

extension ImageTableWriter {
    /// Publishes filled reservations: checksums the pixels, flushes them, then commits every
    /// record and flushes the index (`docs/FORMAT.md`, "Commit protocol"). One flush pair for the
    /// whole batch. On failure nothing in the batch is published and every slot is freed.
    ///
    /// - Parameter reservations: reservations from ``reserve(key:sourceUUID:evicting:staged:replacingOwn:)`` on this table.
    /// - Returns: one outcome per reservation.
    /// - Throws: ``ImageTableError`` `invalidArgument` for a foreign reservation, one no longer
    ///   pending (abandoned or published already) or a content rectangle outside the slot,
    ///   `io`/`noSpace` when a flush fails (never retried).
    @discardableResult
    public func publish(_ reservations: [SlotReservation]) throws(ImageTableError) -> [WriteOutcome] {
        let l = file.layout
        for r in reservations {
            let c = r.contentRect
            guard r.owner == ObjectIdentifier(self), c.x >= 0, c.y >= 0, c.width >= 0, c.height >= 0,
                  c.x + c.width <= l.width, c.y + c.height <= l.height else {
                reservations.forEach(abandon)
                throw ImageTableError(.invalidArgument, "reservation for '\(r.key)' is foreign or its content rectangle \(c) lies outside the slot", path: path)
            }
        }
        // A slot given back may already be another key's: publishing into it would serve that
        // key's pixels under this one. Staged buffers are pinned with the check: they are read
        // (checksums) and written into the file outside the lock.
        let (closed, gone, staged) = state.withLock { s -> (Bool, SlotReservation?, [Staged]) in
            if s.closed { return (true, nil, []) }
            if let gone = reservations.first(where: { !isPending($0, in: s) }) { return (false, gone, []) }
            beginKeptRemovals(reservations, in: &s)
            return (false, nil, pinStaged(reservations, in: &s))
        }
        // A closed handle gave every reservation up; that is the error to report.
        if closed { throw ImageTableError(.notWritable, "table is closed", path: path) }
        if let gone {
            reservations.forEach(abandon)
            throw notPending(gone)
        }
        let checksums = reservations.map { $0.pixelChecksum ?? CRC32.checksum(UnsafeRawBufferPointer($0.pixels)) }
        let flushed = options.durability == .flushed
        do throws(ImageTableError) {
            defer { unpin(staged) }
            try writeStaged(staged, flushed: flushed)
        } catch {
            reservations.forEach(abandon)
            throw error
        }
        do throws(ImageTableError) {
            let buckets = try indexReservations(reservations)
            if flushed { try flushSlots(reservations, buckets: buckets) }
            // Counted for a batch writer's releaseMappedPages.
            state.withLock { $0.bucketsTouched += buckets.count }
        } catch {
            reservations.forEach(abandon)
            throw error
        }
        let now = options.timestamp ?? UInt64(Date().timeIntervalSince1970)
        try state.withLock { s throws(ImageTableError) in
            // A closed handle no longer holds the writer lock: nothing may reach the file.
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            // Checked again where it counts: a reservation given back since the check above
            // (another thread's abandon) has a slot that may be another key's by now.
            if let gone = reservations.first(where: { !isPending($0, in: s) }) {
                for r in reservations { abandon(r, in: &s) }
                throw notPending(gone)
            }
            for (r, crc) in zip(reservations, checksums) {
                let record = file.record(r.slot)
                record.writeFields(entity: r.entityUUID, source: r.sourceUUID, key: r.key, pixelChecksum: crc,
                                   rect: r.contentRect, writtenAt: now, sourceModifiedNs: r.sourceModifiedNs, familyTag: r.familyTag)
                let stamp = file.nextClock()
                record.setRecency(stamp)
                record.setCommitted()
                record.endWrite((s.pending[r.entityUUID]?.writeGeneration ?? r.generation) &+ 1)
                file.bumpChangeCount()
                s.pending[r.entityUUID]?.staging?.deallocate()
                s.pending[r.entityUUID] = nil
                s.directory.insert(slot: r.slot, recency: stamp)
            }
            file.entryCount = UInt64(s.liveCount)
        }
        if flushed {
            do {
                try flushRecords(reservations.map(\.slot))
            } catch {
                // The records' fate on disk is unknown: take them back rather than trust them.
                for r in reservations { _ = try? delete(entity: r.entityUUID, flush: false) }
                throw error
            }
        }
        return reservations.map { WriteOutcome(slot: $0.slot, evictedKey: $0.evictedKey, replacedExisting: $0.replacesExisting) }
    }

    /// Removes the entries that `reservations` kept readable (``Pending/keepsEntry``), with the
    /// state locked, before their slots receive new pixels: each record goes odd and empty, as
    /// a reservation that does not keep its entry leaves it at once. ``writeStaged(_:flushed:)``
    /// then makes the removals durable before it writes the pixels.
    private func beginKeptRemovals(_ reservations: [SlotReservation], in s: inout State) {
        for r in reservations where s.pending[r.entityUUID]?.holdsKeptEntry == true {
            let record = file.record(r.slot)
            // From the record's generation now, not the reservation's: a retime meanwhile
            // (``updateSourceModified(_:)``) moved it on, and it must never go back.
            let odd = record.nextWriteGeneration
            record.beginWrite(odd)
            record.clear()
            file.bumpChangeCount()
            s.pending[r.entityUUID]!.removalBegun = odd
        }
        file.entryCount = UInt64(s.liveCount)
    }

    /// A staged reservation's buffer, pinned by a publish.
    typealias Staged = (reservation: SlotReservation, pixels: UnsafeMutableRawBufferPointer)

    /// Pins the staging buffers of `reservations` (all pending), with the state locked: until
    /// ``unpin(_:)``, an abandon of one of them waits (neither its buffer is freed nor its slot
    /// given to another key), and ``close()`` waits too, since the pins' writes go through the
    /// descriptor.
    func pinStaged(_ reservations: [SlotReservation], in s: inout State) -> [Staged] {
        var staged: [Staged] = []
        for r in reservations {
            guard let pixels = s.pending[r.entityUUID]?.staging else { continue }
            s.pending[r.entityUUID]!.pins += 1
            staged.append((r, pixels))
        }
        if !staged.isEmpty { s.stagedWrites += 1 }
        return staged
    }

    /// Ends ``pinStaged(_:in:)``'s pins, running the abandons that waited for the last of them.
    func unpin(_ staged: [Staged]) {
        guard !staged.isEmpty else { return }
        state.withLock { s in
            for (r, _) in staged where isPending(r, in: s) {
                s.pending[r.entityUUID]!.pins -= 1
                if s.pending[r.entityUUID]!.pins == 0 && s.pending[r.entityUUID]!.abandonWhenUnpinned { abandon(r, in: &s) }
            }
            s.stagedWrites -= 1
        }
    }

    /// Writes pinned staged pixels into their slots, after flushing the removals of the entries
    /// those slots held.
    ///
    /// - Throws: `io` when a write or the flush fails.
    private func writeStaged(_ staged: [Staged], flushed: Bool) throws(ImageTableError) {
        guard !staged.isEmpty else { return }
        // The removals of the entries these slots held reach the disk before their new pixels do.
        if flushed { try file.flushAll() }
        for (r, pixels) in staged {
            if let error = SystemIO.writeAll(file.fd, UnsafeRawBufferPointer(pixels), at: file.layout.slotOffset(r.slot)) {
                throw ImageTableError(.io, "could not write slot \(r.slot): \(error.reason)", path: path)
            }
        }
    }

    /// The error of a reservation given back (or published) before it was published.
    private func notPending(_ reservation: SlotReservation) -> ImageTableError {
        ImageTableError(.invalidArgument, "reservation for '\(reservation.key)' is no longer pending (abandoned or published already)",
                        path: path)
    }

    /// Makes the hash index lead to every reservation's slot before any of them is committed
    /// (a committed record the index does not lead to would be invisible to readers), rebuilding
    /// the index when stale buckets leave no room.
    ///
    /// - Returns: the file offsets of the buckets written, for a single write's flush.
    private func indexReservations(_ reservations: [SlotReservation]) throws(ImageTableError) -> [Int] {
        let durable = options.durability == .flushed
        return try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            var offsets: [Int] = []
            for r in reservations {
                do {
                    if let offset = try s.index.insert(entity: r.entityUUID, slot: r.slot) { offsets.append(offset) }
                } catch let error as ImageTableError {
                    throw error
                } catch {
                    // No room on the probe path: the rebuild, made durable, includes every reservation in flight.
                    _ = try Self.rebuildIndex(file, state: &s, durable: durable)
                    return []
                }
            }
            if s.index.isCrowded {
                _ = try Self.rebuildIndex(file, state: &s, durable: durable)
                return []
            }
            return offsets
        }
    }

    /// Writes one entry by letting `fill` render straight into its slot, then publishes it.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: identifies the source.
    ///   - fill: fills `reservation.pixels` in the table's style and may narrow `contentRect`;
    ///     if it throws, the slot is abandoned and the error rethrown.
    /// - Returns: what the write did.
    /// - Throws: what ``reserve(key:sourceUUID:evicting:staged:replacingOwn:)``, `fill` or ``publish(_:)`` throw.
    @discardableResult
    public func write(key: String, sourceUUID: UUID, fill: (inout SlotReservation) throws -> Void) throws -> WriteOutcome {
        var reservation = try reserve(key: key, sourceUUID: sourceUUID)
        do {
            try fill(&reservation)
        } catch {
            abandon(reservation)
            throw error
        }
        return try publish([reservation])[0]
    }

    /// Writes one entry from pixels in the table's style, copying rows of `bytesPerRow` bytes
    /// (the table's own row size when `nil`) and zeroing row padding.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: identifies the source.
    ///   - pixels: `height` rows in the table's style.
    ///   - bytesPerRow: the source's row stride; at least `width × bytesPerPixel`.
    ///   - contentRect: the part of the slot the image covers; the whole slot when `nil`.
    ///   - familyTag: the ``FamilyTag`` of the formats the pixels were drawn beside, for the record.
    /// - Returns: what the write did.
    /// - Throws: `invalidArgument` when `pixels` is too short, and what ``write(key:sourceUUID:fill:)`` throws.
    @discardableResult
    public func write(key: String, sourceUUID: UUID, pixels: UnsafeRawBufferPointer, bytesPerRow: Int? = nil,
                      contentRect: PixelRect? = nil, familyTag: UInt16 = FamilyTag.unknown) throws(ImageTableError) -> WriteOutcome {
        let l = file.layout
        let rowBytes = l.width * l.style.bytesPerPixel
        let stride = bytesPerRow ?? l.bytesPerRow
        guard stride >= rowBytes, pixels.count >= stride * (l.height - 1) + rowBytes else {
            throw ImageTableError(.invalidArgument, "pixel buffer of \(pixels.count) bytes is too small for \(l.width)×\(l.height) \(l.style.rawValue)", path: path)
        }
        var r = try reserve(key: key, sourceUUID: sourceUUID)
        for y in 0..<l.height {
            let row = r.pixels.baseAddress! + y * l.bytesPerRow
            row.copyMemory(from: pixels.baseAddress! + y * stride, byteCount: rowBytes)
            (row + rowBytes).initializeMemory(as: UInt8.self, repeating: 0, count: l.bytesPerRow - rowBytes)
        }
        if let contentRect { r.contentRect = contentRect }
        r.familyTag = familyTag
        return try publish([r])[0]
    }

    /// Removes `key`'s entry.
    ///
    /// - Parameter key: the entry's key.
    /// - Returns: whether there was an entry.
    /// - Throws: `io` when flushing the index fails (the entry is gone from this handle regardless).
    @discardableResult
    public func delete(key: String) throws(ImageTableError) -> Bool {
        try delete(entity: EntityKey.uuid(for: key), flush: options.durability == .flushed)
    }

    /// Removes the entries of `keys`, flushing the index once for all of them: a bake's pruning.
    /// Their slots are the first the next writes reuse.
    ///
    /// - Parameter keys: the entries' keys.
    /// - Returns: how many had an entry.
    /// - Throws: `io` when flushing the index fails (the entries are gone from this handle regardless).
    @discardableResult
    public func delete(keys: [String]) throws(ImageTableError) -> Int {
        var removals: [(slot: Int, generation: UInt64)] = []
        for key in keys {
            if let removal = try remove(entity: EntityKey.uuid(for: key)) { removals.append(removal) }
        }
        if options.durability == .flushed { try flushRemovals(removals) }
        return removals.count
    }

    func delete(entity: UUID, flush: Bool) throws(ImageTableError) -> Bool {
        guard let removal = try remove(entity: entity) else { return false }
        if flush { try flushRemovals([removal]) }
        return true
    }

    /// Flushes the cleared records of `removals`, then stops counting them as unflushed: each
    /// only if its slot's unflushed removal is still that one (not a later one of the slot).
    private func flushRemovals(_ removals: [(slot: Int, generation: UInt64)]) throws(ImageTableError) {
        try flushRecords(removals.map(\.slot))
        state.withLock { s in
            for (slot, generation) in removals where s.unflushedRemovals[slot] == generation { s.unflushedRemovals[slot] = nil }
        }
    }

    /// Clears an entity's record under the seqlock and frees its slot; returns the slot and the
    /// record's generation after the removal. Its bucket stays: it leads to an empty record,
    /// which readers pass over, and the next insert on that probe path reuses it.
    private func remove(entity: UUID) throws(ImageTableError) -> (slot: Int, generation: UInt64)? {
        try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            // A key being rewritten is not there to delete until its write is published, as when
            // its reservation cleared its record at once (a kept entry's record is committed).
            guard s.pending[entity] == nil, let slot = file.indexedSlot(of: entity) else { return nil }
            let record = file.record(slot)
            let odd = record.generation | 1
            record.beginWrite(odd)
            record.clear()
            record.endWrite(odd &+ 1)
            file.bumpChangeCount()
            s.directory.remove(slot: slot)
            s.directory.release(slot: slot)
            // Freed before the caller flushes the cleared record: another thread may take it first.
            if options.durability == .flushed { s.unflushedRemovals[slot] = odd &+ 1 }
            file.entryCount = UInt64(s.liveCount)
            return (slot, odd &+ 1)
        }
    }

    private func flushSlots(_ reservations: [SlotReservation], buckets: [Int]) throws(ImageTableError) {
        if reservations.count == 1, let r = reservations.first, buckets.isEmpty {
            try file.flush(offset: file.layout.slotOffset(r.slot), count: file.layout.imageBytes)
        } else if !reservations.isEmpty {
            // The slot and a bucket far from it: one fdatasync costs less than two msyncs.
            try file.flushAll()
        }
    }

    /// Flushes the records of `slots`, and the header's first bytes when `recordsInUse` grew
    /// (so that scans after a power cut still reach every committed record).
    func flushRecords(_ slots: [Int]) throws(ImageTableError) {
        guard let low = slots.min(), let high = slots.max() else { return }
        let l = file.layout
        if l.recordOffset(low) < 4096 {
            try file.flush(offset: 0, count: l.recordOffset(high) + TableLimits.recordBytes)
            return
        }
        let grew = state.withLock { s in
            defer { s.flushedRecordsInUse = file.recordsInUse }
            return file.recordsInUse != s.flushedRecordsInUse
        }
        if grew { try file.flush(offset: 0, count: TableLimits.headerBytes) }
        try file.flush(offset: l.recordOffset(low), count: l.recordOffset(high) - l.recordOffset(low) + TableLimits.recordBytes)
    }
}

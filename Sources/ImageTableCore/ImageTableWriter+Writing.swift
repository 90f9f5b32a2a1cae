import Foundation

extension ImageTableWriter {
    /// Sets a slot aside for `key`: the key's own slot if it has an entry, else a free slot, else
    /// the least recently used entry's slot (the cap is hard: the table never grows past it).
    ///
    /// The slot is unpublished at once (a kill from here on loses only this key and any evicted
    /// entry) and backed by disk blocks, so filling it cannot fault on a full disk.
    ///
    /// A caller that does not yet know whether it will have pixels to publish (the bake, before a
    /// source has decoded) passes `evicting: false`, so that a source that turns out to be bad
    /// never costs a good entry its place.
    ///
    /// - Parameters:
    ///   - key: the entry's key, at most 160 UTF-8 bytes.
    ///   - sourceUUID: identifies the source the pixels are made from.
    ///   - evicting: whether a full table may replace its least recently used entry; when
    ///     `false` and the key has no slot of its own, a full table throws `full`.
    /// - Returns: the reservation to fill and publish.
    /// - Throws: ``ImageTableError``: `invalidArgument` for a long key, `busy` when the key is already
    ///   being written or every slot is reserved, `full`, `noSpace`, `io`, `notWritable` after close.
    public func reserve(key: String, sourceUUID: UUID, evicting: Bool = true) throws(ImageTableError) -> SlotReservation {
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
            let replaces: Bool
            if let own = s.directory.slot(of: entity) {
                s.directory.remove(entity: entity)
                (slot, replaces) = (own, true)
            } else {
                if !evicting && !s.directory.hasFreeSlot {
                    throw ImageTableError(.full, "the table is full and this write may not evict", path: path)
                }
                guard let taken = s.directory.takeSlot(fileRecency: { file.record($0).recency }) else {
                    throw ImageTableError(.busy, "every slot is reserved by writes in progress", path: path)
                }
                if taken.evicted != nil { evictedKey = file.record(taken.slot).key }
                (slot, replaces) = (taken.slot, false)
            }
            let record = file.record(slot)
            let odd = (record.generation | 1) &+ (record.generation & 1 == 1 ? 2 : 0)
            record.beginWrite(odd)
            let wasPublished = record.state != IndexRecord.stateEmpty
            if wasPublished {
                record.clear()
                file.bumpChangeCount()
            }
            do throws(ImageTableError) {
                try file.ensureBacked(slot: slot)
                if wasPublished && options.durability == .flushed {
                    try file.flush(offset: file.layout.recordOffset(slot), count: TableLimits.recordBytes)
                }
            } catch {
                record.endWrite(odd &+ 1)
                s.directory.release(slot: slot)
                throw error
            }
            s.pending[entity] = (slot, odd)
            let l = file.layout
            return SlotReservation(
                slot: slot, key: key, entityUUID: entity, sourceUUID: sourceUUID, evictedKey: evictedKey,
                replacesExisting: replaces,
                pixels: UnsafeMutableRawBufferPointer(start: file.slot(slot), count: l.imageBytes),
                width: l.width, height: l.height, bytesPerRow: l.bytesPerRow, style: l.style,
                contentRect: PixelRect(x: 0, y: 0, width: l.width, height: l.height),
                generation: odd, owner: ObjectIdentifier(self))
        }
    }

    /// Publishes filled reservations: checksums the pixels, flushes them, then commits every
    /// record and flushes the index (`docs/FORMAT.md`, "Commit protocol"). One flush pair for the
    /// whole batch. On failure nothing in the batch is published and every slot is freed.
    ///
    /// - Parameter reservations: reservations from ``reserve(key:sourceUUID:)`` on this table.
    /// - Returns: one outcome per reservation.
    /// - Throws: ``ImageTableError`` `invalidArgument` for a foreign reservation or a content
    ///   rectangle outside the slot, `io`/`noSpace` when a flush fails (never retried).
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
        let checksums = reservations.map { CRC32.checksum(UnsafeRawBufferPointer($0.pixels)) }
        do {
            if options.durability == .flushed { try flushSlots(reservations) }
        } catch {
            reservations.forEach(abandon)
            throw error
        }
        let now = UInt64(Date().timeIntervalSince1970)
        try state.withLock { s throws(ImageTableError) in
            // A closed handle no longer holds the writer lock: nothing may reach the file.
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            for (r, crc) in zip(reservations, checksums) {
                let record = file.record(r.slot)
                record.writeFields(entity: r.entityUUID, source: r.sourceUUID, key: r.key, pixelChecksum: crc,
                                   rect: r.contentRect, writtenAt: now)
                let stamp = file.nextClock()
                record.setRecency(stamp)
                record.setCommitted()
                record.endWrite(r.generation &+ 1)
                file.bumpChangeCount()
                s.pending[r.entityUUID] = nil
                s.directory.insert(entity: r.entityUUID, slot: r.slot, recency: stamp)
            }
        }
        if options.durability == .flushed {
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

    /// Unmaps the pages of `slots` from this process; the data stays in the file and the page
    /// cache, and reading the entries again maps it back. For batch writers that publish many
    /// entries and read none of them, so that resident memory stays flat however large the
    /// table; a runtime cache that reads what it writes has no reason to call it.
    ///
    /// - Parameter slots: slot indices, such as ``WriteOutcome/slot`` or ``SlotReservation/slot``.
    public func releaseMappedPages(slots: [Int]) {
        for slot in slots where slot >= 0 && slot < file.layout.capacity { file.dropPages(slot: slot) }
    }

    /// Gives a reservation's slot back unpublished. Idempotent.
    ///
    /// - Parameter reservation: a reservation from this table.
    public func abandon(_ reservation: SlotReservation) {
        guard reservation.owner == ObjectIdentifier(self) else { return }
        state.withLock { s in
            guard s.pending.removeValue(forKey: reservation.entityUUID) != nil else { return }
            let record = file.record(reservation.slot)
            record.clear()
            record.endWrite(reservation.generation &+ 1)
            s.directory.release(slot: reservation.slot)
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
    /// - Throws: what ``reserve(key:sourceUUID:)``, `fill` or ``publish(_:)`` throw.
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
    /// - Returns: what the write did.
    /// - Throws: `invalidArgument` when `pixels` is too short, and what ``write(key:sourceUUID:fill:)`` throws.
    @discardableResult
    public func write(key: String, sourceUUID: UUID, pixels: UnsafeRawBufferPointer, bytesPerRow: Int? = nil,
                      contentRect: PixelRect? = nil) throws(ImageTableError) -> WriteOutcome {
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

    func delete(entity: UUID, flush: Bool) throws(ImageTableError) -> Bool {
        let slot: Int? = try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            guard let slot = s.directory.slot(of: entity) else { return nil }
            let record = file.record(slot)
            let odd = record.generation | 1
            record.beginWrite(odd)
            record.clear()
            record.endWrite(odd &+ 1)
            file.bumpChangeCount()
            s.directory.remove(entity: entity)
            s.directory.release(slot: slot)
            return slot
        }
        guard let slot else { return false }
        if flush { try flushRecords([slot]) }
        return true
    }

    private func flushSlots(_ reservations: [SlotReservation]) throws(ImageTableError) {
        if reservations.count == 1, let r = reservations.first {
            try file.flush(offset: file.layout.slotOffset(r.slot), count: file.layout.imageBytes)
        } else if !reservations.isEmpty {
            try file.flushAll()
        }
    }

    private func flushRecords(_ slots: [Int]) throws(ImageTableError) {
        guard let low = slots.min(), let high = slots.max() else { return }
        let l = file.layout
        try file.flush(offset: l.recordOffset(low), count: l.recordOffset(high) - l.recordOffset(low) + TableLimits.recordBytes)
    }
}

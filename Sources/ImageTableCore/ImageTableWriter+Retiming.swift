extension ImageTableWriter {
    /// Records new source modification times for entries whose pixels stay as they are.
    ///
    /// A source touched without changing (a new modification time over the same bytes) keeps
    /// its entry, since rendering it again would give the same pixels; but the entry's
    /// ``EntryInfo/sourceModifiedNs`` is what `imagetable merge` ranks it by, so a bake that
    /// finds such a source records its current time here rather than leave the old one.
    ///
    /// Only the record's `sourceModified` field and its checksum change: key, source UUID,
    /// pixel checksum, content rectangle, `writtenAt`, recency and the slot's pixels stay, and
    /// `changeCount` does not move (no entry comes or goes). Each record is changed under its
    /// seqlock, as a publication does (`docs/FORMAT.md`, "Commit protocol"): its generation goes
    /// odd, then, once the time and checksum are stored, even again, 2 more than before, so a
    /// reader in another process never takes a half-updated record for a whole one. The records
    /// changed are flushed once for the batch, unless the writer was opened with
    /// ``Durability/processCrashOnly``.
    ///
    /// A writer killed in the middle of it leaves at most one record with an odd generation,
    /// exactly what a write interrupted by a kill leaves: readers pass over it, `verify` reports
    /// it as an interrupted write, and the next writer to open the table clears it (its notice,
    /// ``TableNotice/Kind/discardedInterruptedWrite``), so that one entry is lost and no other.
    /// Records already changed keep their new time, or after a power cut before the flush their
    /// old one; either is a whole, checksummed record.
    ///
    /// Keys with no committed entry are passed over (a key being written at the moment has
    /// none), and so are entries that already record the time given and records whose
    /// checksum fails (damaged since the writer opened the table: left for `verify`).
    ///
    /// The index probes and the records changed are mapped into this process; a batch writer
    /// hands the slots returned to ``releaseMappedPages(slots:records:)``, which counts the
    /// probes too.
    ///
    /// - Parameter updates: each key with the source modification time its entry should record,
    ///   in nanoseconds since 1970. A key given twice records the last time given.
    /// - Returns: the slots whose records changed, once each, in the order of `updates`: its
    ///   count is the number of entries updated.
    /// - Throws: ``ImageTableError`` `notWritable` after ``close()``, `io` when the flush fails
    ///   (the records keep their new times in this process's view of the file, but whether
    ///   they reached the disk is unknown).
    @discardableResult
    public func updateSourceModified(_ updates: [(key: String, sourceModifiedNs: Int64)]) throws(ImageTableError) -> [Int] {
        try changeRecords { s in
            // Each probe maps part of the hash index, which releaseMappedPages unmaps in turn.
            s.bucketsTouched += updates.count
            var changed: [Int] = [], seen = Set<Int>()
            for (key, modifiedNs) in updates {
                // The probe finds only a committed record with an even generation; under the
                // lock no reservation of this handle can make it odd meanwhile.
                guard let slot = file.indexedSlot(of: EntityKey.uuid(for: key)) else { continue }
                let record = file.record(slot)
                // A record damaged since the open must not be given a checksum that covers its damage.
                guard record.sourceModifiedNs != modifiedNs, record.storedChecksum == record.computeChecksum() else { continue }
                record.rewrite { record.setSourceModified(modifiedNs) }
                if seen.insert(slot).inserted { changed.append(slot) }
            }
            return changed
        }
    }

    /// Records `tag` as the ``FamilyTag`` of the committed entries in `slots` that have none
    /// (written before tags were recorded), leaving their pixels as they are: a bake takes such
    /// entries as drawn for its family as it is, and tags them so that a later change of the
    /// family's formats is seen. Each record is changed under its seqlock and flushed as
    /// ``updateSourceModified(_:)`` changes one; empty, reserved, damaged and tagged records are
    /// passed over.
    ///
    /// - Parameters:
    ///   - tag: the family's tag.
    ///   - slots: the slots of the entries to tag, read from the records before (the caller has
    ///     changed none of them since).
    /// - Returns: the slots whose records changed.
    /// - Throws: ``ImageTableError`` `notWritable` after ``close()``, `io` when the flush fails.
    @discardableResult
    public func adoptFamilyTag(_ tag: UInt16, slots: [Int]) throws(ImageTableError) -> [Int] {
        try changeRecords { _ in
            var changed: [Int] = []
            for slot in slots where (0..<file.layout.capacity).contains(slot) {
                let record = file.record(slot)
                guard record.generation & 1 == 0, record.state == IndexRecord.stateCommitted, record.familyTag == FamilyTag.unknown,
                      record.storedChecksum == record.computeChecksum() else { continue }
                record.rewrite { record.setFamilyTag(tag) }
                changed.append(slot)
            }
            return changed
        }
    }

    /// Runs `change` under the writer's lock, unless the writer is closed, and flushes the
    /// records whose slots it returns once (unless ``Durability/processCrashOnly``): the frame of
    /// the record-only changes above.
    private func changeRecords(_ change: (inout State) -> [Int]) throws(ImageTableError) -> [Int] {
        let changed: [Int] = try state.withLock { s throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.notWritable, "table is closed", path: path) }
            return change(&s)
        }
        if options.durability == .flushed { try flushRecords(changed) }
        return changed
    }
}

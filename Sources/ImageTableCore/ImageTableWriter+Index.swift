import Foundation

extension ImageTableWriter {
    /// What a writer does at open, reading every record in use once: clears interrupted writes
    /// and damaged records, drops both records of an entity two records claim, counts the
    /// entries and the free slots, and checks that the hash index leads to every entry. If it
    /// does not (a damaged index), or stale buckets crowd it, the index is rebuilt.
    ///
    /// - Returns: notices for what was dropped or rebuilt.
    static func openScan(_ file: TableFile, state: inout State, durable: Bool) throws(ImageTableError) -> [TableNotice] {
        var notices: [TableNotice] = []
        var count = 0, highWater = 0, empties: [Int] = [], unindexed = 0
        // Entities whose claimants were dropped: a third record of one, read later, is dropped
        // too (the index no longer leads anywhere for it, and it was kept as unindexed).
        var duplicated: Set<UUID> = []
        func drop(_ slot: Int, _ kind: TableNotice.Kind, _ reason: String) {
            file.clearRecord(slot)
            notices.append(TableNotice(kind: kind, message: "slot \(slot): \(reason); dropped it", slot: slot))
        }
        file.forEachRecord { slot in
            switch RecordScan.judge(slot: slot, of: file, checkKeys: false) {
            case .empty:
                empties.append(slot)
            case .interrupted:
                drop(slot, .discardedInterruptedWrite, "interrupted write")
                empties.append(slot)
            case .damaged(let reason):
                drop(slot, .damagedRecord, reason)
                empties.append(slot)
            case .committed(let entity) where duplicated.contains(entity):
                drop(slot, .damagedRecord, "another record also claimed this entry's entity, so neither is trusted")
                empties.append(slot)
            case .committed(let entity):
                switch file.indexedSlot(of: entity) {
                case slot?:
                    count += 1
                    highWater = slot + 1
                case let other?:
                    // The other record was counted when it was read, or is read later as empty.
                    drop(slot, .damagedRecord, RecordScan.duplicateReason(slot: slot, claimants: [slot, other]))
                    drop(other, .damagedRecord, RecordScan.duplicateReason(slot: other, claimants: [slot, other]))
                    duplicated.insert(entity)
                    empties.append(slot)
                    if other < slot {
                        count -= 1
                        empties.append(other)
                    }
                case nil:
                    unindexed += 1
                    count += 1
                    highWater = slot + 1
                }
            }
        }
        state.directory.load(count: count, highWater: highWater, holes: empties.filter { $0 < highWater })
        if unindexed > 0 || state.index.isCrowded || file.usedBuckets < UInt64(count) {
            if unindexed > 0 {
                notices.append(TableNotice(kind: .damagedIndex, message: "the hash index did not lead to \(unindexed) "
                    + "\(unindexed == 1 ? "entry" : "entries"); rebuilt it", slot: nil))
            }
            notices += try rebuildIndex(file, state: &state, durable: durable)
        }
        if file.recordsInUse < UInt64(state.directory.highWater) { file.recordsInUse = UInt64(state.directory.highWater) }
        file.entryCount = UInt64(state.liveCount)
        if !notices.isEmpty && durable {
            try file.flush(offset: 0, count: file.layout.bucketsOffset)
        }
        // Checking every entry's bucket faulted in the whole active area (entries hash all over
        // it): 16 MB at a million slots, held to the end of a bake. The page cache keeps it.
        file.dropBucketArea(file.activeBucketArea)
        return notices
    }

    /// Rebuilds the hash index from every committed record and every reservation in flight,
    /// into the area readers are not using, and switches to it. Two committed records of one
    /// entity are both dropped, as at open. Under the writer's mutex (or before it exists).
    ///
    /// - Returns: notices for records dropped as duplicates.
    static func rebuildIndex(_ file: TableFile, state: inout State, durable: Bool) throws(ImageTableError) -> [TableNotice] {
        var notices: [TableNotice] = []
        let area = try state.index.beginRebuild()
        var added = 0
        var failure: ImageTableError?
        var index = state.index
        for (entity, pending) in state.pending {
            do throws(ImageTableError) {
                _ = try index.add(entity: entity, slot: pending.slot, area: area)
                added += 1
            } catch {
                failure = failure ?? error
            }
        }
        var dropped: [Int] = []
        // A kept entry's record is committed, and its reservation was added above.
        let reserved = state.pendingSlots
        file.forEachRecord { slot in
            guard failure == nil, slot < state.directory.highWater, !reserved.contains(slot) else { return }
            let record = file.record(slot)
            guard record.generation & 1 == 0, record.state == IndexRecord.stateCommitted else { return }
            do throws(ImageTableError) {
                if let rival = try index.add(entity: record.entityUUID, slot: slot, area: area) {
                    for s in [rival, slot] {
                        file.clearRecord(s)
                        dropped.append(s)
                        notices.append(TableNotice(kind: .damagedRecord, message: "slot \(s): "
                            + RecordScan.duplicateReason(slot: s, claimants: [rival, slot]) + "; dropped it", slot: s))
                    }
                } else {
                    added += 1
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        try index.finishRebuild(area: area, count: added, durable: durable)
        state.index = index
        for slot in dropped {
            state.directory.remove(slot: slot)
            state.directory.release(slot: slot)
        }
        file.entryCount = UInt64(state.liveCount)
        return notices
    }
}

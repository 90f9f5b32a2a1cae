import CTableSupport
import Foundation

/// One pass over the index that sorts records into committed entries and damage.
///
/// Writers repair what the scan finds (an interrupted write or a damaged record becomes an empty
/// record); readers only skip it. Either way nothing damaged is ever served.
struct RecordScan {
    /// A committed, self-consistent record.
    struct Committed {
        let slot: Int
        let entity: UUID
        let recency: UInt64
    }

    /// A record that cannot be trusted.
    struct Problem {
        let slot: Int
        let kind: TableNotice.Kind
        let reason: String
    }

    /// What one record says on its own, before other records are consulted.
    enum Verdict: Equatable {
        /// An empty record.
        case empty
        /// A writer's odd generation: a write in progress, or one a killed writer left.
        case interrupted
        /// Unsound, for the reason given.
        case damaged(String)
        /// A committed, self-consistent record of this entity.
        case committed(UUID)
    }

    private(set) var committed: [Committed] = []
    private(set) var problems: [Problem] = []

    /// Scans every record of `file` a writer may have used (``TableFile/scanLimit``).
    ///
    /// Two records that claim one entity are both problems: nothing says which is genuine (a
    /// forged record could otherwise win over the real one and serve another key's image), so
    /// readers serve neither and writers drop both, leaving the next bake to render it again.
    /// This is how version 1 tables are read, whose readers build their own directory.
    ///
    /// - Parameters:
    ///   - file: the mapped table.
    ///   - checkKeys: also recompute each key's entity UUID (SHA-1 per record: verification
    ///     does it; opening relies on the record checksum, which covers both).
    init(_ file: TableFile, checkKeys: Bool = false) {
        var candidates: [Committed] = []
        var claims: [UUID: Int] = [:]
        var found: [Problem] = []
        file.forEachRecord { slot in
            let record = file.record(slot)
            switch Self.judge(slot: slot, of: file, checkKeys: checkKeys) {
            case .empty: return
            case .interrupted: found.append(Problem(slot: slot, kind: .discardedInterruptedWrite, reason: "interrupted write"))
            case .damaged(let reason): found.append(Problem(slot: slot, kind: .damagedRecord, reason: reason))
            case .committed(let entity):
                candidates.append(Committed(slot: slot, entity: entity, recency: record.recency))
                claims[entity, default: 0] += 1
            }
        }
        problems = found
        guard claims.count < candidates.count else {
            committed = candidates
            return
        }
        let slotsByEntity = Dictionary(grouping: candidates.filter { claims[$0.entity]! > 1 }, by: \.entity)
        for candidate in candidates {
            if let rivals = slotsByEntity[candidate.entity] {
                problems.append(Problem(slot: candidate.slot, kind: .damagedRecord,
                                        reason: Self.duplicateReason(slot: candidate.slot, claimants: rivals.map(\.slot))))
            } else {
                committed.append(candidate)
            }
        }
        problems.sort { $0.slot < $1.slot }
    }

    /// Judges slot `slot`'s record alone: its generation, state, checksum, key, rectangle, and
    /// whether the file reaches its slot. The caller decides whether the reading was consistent.
    ///
    /// - Parameters:
    ///   - slot: the record's slot.
    ///   - file: the mapped table.
    ///   - checkKeys: also recompute the key's entity UUID.
    static func judge(slot: Int, of file: TableFile, checkKeys: Bool) -> Verdict {
        let layout = file.layout
        let record = file.record(slot)
        if record.settledGeneration & 1 == 1 { return .interrupted }
        let state = record.state
        if state == IndexRecord.stateEmpty {
            return record.hasLeftoverFields ? .damaged("record marked empty but still holds an entry's fields (damaged state)") : .empty
        }
        guard state == IndexRecord.stateCommitted else { return .damaged("unknown state \(state)") }
        if let damage = record.damage(width: layout.width, height: layout.height, checkKey: checkKeys) { return .damaged(damage) }
        guard file.slotIsBacked(slot) else { return .damaged("slot lies beyond the end of the file") }
        return .committed(record.entityUUID)
    }

    /// Why a record that shares its entity with others is not served.
    ///
    /// - Parameters:
    ///   - slot: the record's slot.
    ///   - claimants: every slot that claims the entity, this one included.
    static func duplicateReason(slot: Int, claimants: [Int]) -> String {
        let others = claimants.filter { $0 != slot }.sorted().map { "slot \($0)" }.joined(separator: ", ")
        return "\(others) also claims this entry's entity, so neither is trusted"
    }
}

extension TableFile {
    /// Runs `body` on every record index a scan must look at (``scanLimit``), in order, and
    /// drops the index pages it has read from this process every 4,096 records (1 MiB), so
    /// that scanning a large index costs no lasting resident memory.
    func forEachRecord(_ body: (Int) -> Void) {
        let limit = scanLimit
        let chunk = 4096
        var start = 0
        while start < limit {
            let end = min(limit, start + chunk)
            for slot in start..<end { body(slot) }
            if limit > chunk { dropPages(offset: layout.recordOffset(start), count: (end - start) * TableLimits.recordBytes) }
            start = end
        }
    }

    /// What a checked read of one slot found.
    enum SlotRead<R> {
        /// Nothing for that entity in the slot.
        case miss
        /// The slot holds that entity's record, and it is not served: another source than the
        /// one asked for, a record that fails its checks, or pixels past the end of the file.
        /// FORMAT.md's rule 7: a reader serves the record the index leads to first and never
        /// looks for another (a probe that went on could serve a duplicate further along).
        case refused
        /// A writer changed the slot while the body ran; the result was discarded.
        case changed
        /// The body ran on a consistent entry.
        case hit(R)
    }

    /// Runs `body` on slot `slot` if it holds `entity` (with `source`, when given), under the
    /// seqlock of `docs/FORMAT.md`: generation even before, unchanged after.
    func read<R>(slot: Int, entity: UUID, source: UUID?, _ body: (ImageView) throws -> R) rethrows -> SlotRead<R> {
        itc_prefetch(base + layout.slotOffset(slot))
        let record = record(slot)
        let before = record.settledGeneration
        guard before & 1 == 0, record.state == IndexRecord.stateCommitted, record.entityUUID == entity else {
            return before == record.generation ? .miss : .changed
        }
        let stored = record.sourceUUID
        if let source, stored != source { return before == record.generation ? .refused : .changed }
        guard slotIsBacked(slot) else { return .refused }
        let l = layout
        let r = record.contentRect
        // FORMAT.md's reader checks: the record's checksum (hardware CRC, some tens of ns) and a
        // rectangle inside the slot. A stable record that fails them is a miss, as the listing
        // passes over it; a torn one is a change.
        guard record.storedChecksum == record.computeChecksum(), r.x + r.width <= l.width, r.y + r.height <= l.height else {
            return before == record.generation ? .refused : .changed
        }
        if let checked = checkedSlots, !checked.contains(slot) {
            // A writer's first read of the slot since its open: the pixels may not be the ones
            // the record describes (``CheckedSlots``). A miss, as the listing passes over them.
            let sound = CRC32.checksum(UnsafeRawBufferPointer(start: self.slot(slot), count: l.imageBytes)) == record.pixelChecksum
            itc_fence_acquire()
            guard record.generation == before else { return .changed }
            guard sound else { return .refused }
            checked.insert(slot)
        }
        let rect = r
        let view = ImageView(baseAddress: UnsafeRawPointer(self.slot(slot)), width: l.width, height: l.height,
                             bytesPerRow: l.bytesPerRow, style: l.style, contentRect: rect,
                             entityUUID: entity, sourceUUID: stored)
        let result = try body(view)
        itc_fence_acquire()
        // The state too: a writer closed meanwhile maps zeros over the table, whose generation
        // 0 equals a record's that no writer ever rewrote (a merged or upgraded table's).
        return record.generation == before && record.state == IndexRecord.stateCommitted ? .hit(result) : .changed
    }

    /// Copies a committed record's fields out, or `nil` if it is not committed, fails its checks
    /// (checksum, key, rectangle, slot inside the file) or changed meanwhile.
    func entryInfo(slot: Int) -> EntryInfo? {
        let record = record(slot)
        let before = record.settledGeneration
        guard before & 1 == 0, record.state == IndexRecord.stateCommitted,
              record.damage(width: layout.width, height: layout.height, checkKey: false) == nil,
              slotIsBacked(slot), let key = record.key else { return nil }
        let info = EntryInfo(key: key, entityUUID: record.entityUUID, sourceUUID: record.sourceUUID, slot: slot,
                             recency: record.recency, contentRect: record.contentRect,
                             pixelChecksum: record.pixelChecksum, writtenAt: record.writtenAt,
                             sourceModifiedNs: record.sourceModifiedNs, familyTag: record.familyTag)
        itc_fence_acquire()
        return record.generation == before && record.state == IndexRecord.stateCommitted ? info : nil
    }
}


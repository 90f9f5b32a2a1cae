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

    private(set) var committed: [Committed] = []
    private(set) var problems: [Problem] = []

    /// Scans every record of `file`.
    ///
    /// - Parameters:
    ///   - file: the mapped table.
    ///   - checkKeys: also recompute each key's entity UUID (SHA-1 per record: verification
    ///     does it; opening relies on the record checksum, which covers both).
    init(_ file: TableFile, checkKeys: Bool = false) {
        let layout = file.layout
        var seen = Set<UUID>()
        for slot in 0..<layout.capacity {
            let record = file.record(slot)
            let generation = record.generation
            let state = record.state
            if generation & 1 == 1 {
                problems.append(Problem(slot: slot, kind: .discardedInterruptedWrite,
                                        reason: "interrupted write"))
                continue
            }
            if state == IndexRecord.stateEmpty && !record.hasLeftoverFields { continue }
            var reason: String?
            if state == IndexRecord.stateEmpty {
                reason = "record marked empty but still holds an entry's fields (damaged state)"
            } else if state != IndexRecord.stateCommitted {
                reason = "unknown state \(state)"
            } else if let damage = record.damage(width: layout.width, height: layout.height, checkKey: checkKeys) {
                reason = damage
            } else if !file.slotIsBacked(slot) {
                reason = "slot lies beyond the end of the file"
            } else if !seen.insert(record.entityUUID).inserted {
                reason = "a second record for the same entity"
            }
            if let reason {
                problems.append(Problem(slot: slot, kind: .damagedRecord, reason: reason))
            } else {
                committed.append(Committed(slot: slot, entity: record.entityUUID, recency: record.recency))
            }
        }
    }
}

extension TableFile {
    /// What a checked read of one slot found.
    enum SlotRead<R> {
        /// Nothing usable for that entity (and source) in the slot.
        case miss
        /// A writer changed the slot while the body ran; the result was discarded.
        case changed
        /// The body ran on a consistent entry.
        case hit(R)
    }

    /// Runs `body` on slot `slot` if it holds `entity` (with `source`, when given), under the
    /// seqlock of `docs/FORMAT.md`: generation even before, unchanged after.
    func read<R>(slot: Int, entity: UUID, source: UUID?, _ body: (ImageView) throws -> R) rethrows -> SlotRead<R> {
        let record = record(slot)
        let before = record.generation
        guard before & 1 == 0, record.state == IndexRecord.stateCommitted, record.entityUUID == entity else {
            return before == record.generation ? .miss : .changed
        }
        let stored = record.sourceUUID
        if let source, stored != source { return before == record.generation ? .miss : .changed }
        guard slotIsBacked(slot) else { return .miss }
        let l = layout
        let r = record.contentRect
        // A torn rectangle is discarded below, but must not mislead the body meanwhile.
        let rect = r.x + r.width <= l.width && r.y + r.height <= l.height ? r : PixelRect(x: 0, y: 0, width: l.width, height: l.height)
        let view = ImageView(baseAddress: UnsafeRawPointer(self.slot(slot)), width: l.width, height: l.height,
                             bytesPerRow: l.bytesPerRow, style: l.style, contentRect: rect,
                             entityUUID: entity, sourceUUID: stored)
        let result = try body(view)
        itc_fence_acquire()
        return record.generation == before ? .hit(result) : .changed
    }

    /// Copies a committed record's fields out, or `nil` if it is not committed, fails its checks
    /// (checksum, key, rectangle, slot inside the file) or changed meanwhile.
    func entryInfo(slot: Int) -> EntryInfo? {
        let record = record(slot)
        let before = record.generation
        guard before & 1 == 0, record.state == IndexRecord.stateCommitted,
              record.damage(width: layout.width, height: layout.height, checkKey: false) == nil,
              slotIsBacked(slot), let key = record.key else { return nil }
        let info = EntryInfo(key: key, entityUUID: record.entityUUID, sourceUUID: record.sourceUUID, slot: slot,
                             recency: record.recency, contentRect: record.contentRect,
                             pixelChecksum: record.pixelChecksum, writtenAt: record.writtenAt)
        itc_fence_acquire()
        return record.generation == before ? info : nil
    }
}


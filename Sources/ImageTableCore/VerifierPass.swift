import CTableSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The slot-by-slot work of ``TableVerifier``: each record judged and its pixels checksummed
/// under the record's seqlock, as readers read, and read again while a writer changes it.
///
/// A reading counts only when the generation was even before it and unchanged after it; then the
/// record and pixels it saw were one consistent state, and a mismatch between them is damage. A
/// slot that never gives such a reading is *unsettled*: the caller decides, from the writer lock,
/// whether that is a write in progress or one that a killed writer left.
struct VerifierPass {
    /// A committed entry whose record and pixels agreed, at `generation`.
    struct Valid {
        let entity: UUID
        let generation: UInt64
    }

    /// A slot with no consistent reading, and the generation it had last.
    struct Unsettled {
        let slot: Int
        let generation: UInt64
    }

    private enum Outcome {
        case empty
        case valid(Valid)
        case problem(TableVerifier.Problem)
        case unsettled(UInt64)
    }

    let file: TableFile
    /// The header's change counter before the first reading: a writer that published or
    /// removed anything since has made the readings and the live count disagree.
    private let changeCountAtStart: UInt64
    private(set) var valid: [Int: Valid] = [:]
    private(set) var problems: [TableVerifier.Problem] = []
    /// What the last ``run(slots:attempts:)`` could not settle.
    private(set) var unsettled: [Unsettled] = []
    private(set) var inProgress = 0

    init(file: TableFile) {
        self.file = file
        changeCountAtStart = file.changeCount
    }

    /// Checks `slots`, each with up to `attempts` readings; what stays in flux replaces
    /// ``unsettled``. The pages read are dropped from this process as it goes, so verifying a
    /// large table costs no lasting resident memory.
    mutating func run(slots: some Sequence<Int>, attempts: Int) {
        var still: [Unsettled] = []
        var checked = 0
        for slot in slots {
            checked += 1
            if checked % 4096 == 0 {
                file.dropPages(offset: file.layout.recordOffset(max(0, slot - 4096)), count: 4096 * TableLimits.recordBytes)
            }
            switch check(slot: slot, attempts: attempts) {
            case .empty: break
            case .valid(let v): valid[slot] = v
            case .problem(let p): problems.append(p)
            case .unsettled(let generation): still.append(Unsettled(slot: slot, generation: generation))
            }
        }
        unsettled = still
    }

    /// A writer holds the lock: whatever is in flux is its work.
    mutating func settleAsInProgress() {
        inProgress += unsettled.count
        unsettled = []
    }

    /// Decides what stayed unsettled after a look taken while no writer held the lock. An odd
    /// generation that has not moved since, with still no writer, is an interrupted write: only a
    /// writer changes a generation, and a writer that finishes leaves it even. Anything else is a
    /// writer that came meanwhile.
    mutating func settleRemaining(writerActive: Bool) {
        for u in unsettled {
            let record = file.record(u.slot)
            if !writerActive && u.generation & 1 == 1 && record.generation == u.generation {
                problems.append(TableVerifier.Problem(slot: u.slot, key: record.key.flatMap { $0.isEmpty ? nil : $0 },
                                                      code: .interruptedWrite, reason: "interrupted write"))
            } else {
                inProgress += 1
            }
        }
        unsettled = []
    }

    /// Checks that the hash index leads to every valid entry (format version 2): an entry it
    /// does not lead to is invisible to readers, a `damagedIndex` problem (or, while a writer
    /// holds the lock, an entry it may be moving).
    mutating func checkIndex(writerActive: () -> Bool) {
        for (slot, v) in valid.sorted(by: { $0.key < $1.key }) where file.indexedSlot(of: v.entity) != slot {
            let record = file.record(slot)
            if record.generation != v.generation || writerActive() {
                valid[slot] = nil
                inProgress += 1
                continue
            }
            valid[slot] = nil
            problems.append(TableVerifier.Problem(slot: slot, key: record.key, code: .damagedIndex,
                                                  reason: "the hash index does not lead to this entry, so readers miss it"))
        }
    }

    /// Checks the header's live entry count (format version 2), which readers report as the
    /// table's size without reading the index, against the committed records: valid ones, and
    /// those whose pixels or index entry are damaged. A write a killed writer left may or may not
    /// have been counted, and a damaged record may have been, so each widens the range allowed.
    /// A count outside it is stale (a writer stopped between a record and the count, or a crash
    /// that lost the header's page): not damage, since every writer counts again at open.
    /// Skipped while a writer works, or after one worked during the readings, since the count and
    /// the records change apart.
    mutating func checkEntryCount(writerActive: () -> Bool) {
        let counted = file.entryCount
        // Asked after the count is read: a writer that had begun by then may have changed it,
        // and one that came and went during the readings (a whole bake, between two slots)
        // leaves the change counter moved.
        guard inProgress == 0, file.changeCount == changeCountAtStart, !writerActive() else { return }
        let committed = valid.count + problems.count { $0.code == .pixelChecksumMismatch || $0.code == .damagedIndex }
        let uncertain = problems.count { $0.code == .interruptedWrite || $0.code == .damagedRecord }
        guard counted < UInt64(committed) || counted > UInt64(committed + uncertain) else { return }
        let held = uncertain == 0 ? "\(committed)" : "\(committed) to \(committed + uncertain)"
        problems.append(TableVerifier.Problem(slot: nil, key: nil, code: .staleEntryCount,
                                              reason: "the header counts \(counted) \(counted == 1 ? "entry" : "entries") where the records "
                                                  + "hold \(held), so readers report the wrong count"))
    }

    /// Two valid records of one entity are both damage when neither changed since it was
    /// checked (so both held the entity at once); if one did, a writer moved the entry meanwhile.
    mutating func findDuplicates() {
        var slotsByEntity: [UUID: [Int]] = [:]
        for (slot, v) in valid { slotsByEntity[v.entity, default: []].append(slot) }
        for slots in slotsByEntity.values where slots.count > 1 {
            let unchanged = slots.allSatisfy { file.record($0).generation == valid[$0]!.generation }
            for slot in slots.sorted() {
                valid[slot] = nil
                if unchanged {
                    problems.append(TableVerifier.Problem(slot: slot, key: file.record(slot).key, code: .damagedRecord,
                                                          reason: RecordScan.duplicateReason(slot: slot, claimants: slots)))
                } else {
                    inProgress += 1
                }
            }
        }
    }

    private func check(slot: Int, attempts: Int) -> Outcome {
        let record = file.record(slot)
        for attempt in 0..<attempts {
            if attempt > 0 { Self.pause(attempt) }
            let before = record.generation
            guard before & 1 == 0 else { continue }
            let outcome: Outcome
            switch RecordScan.judge(slot: slot, of: file, checkKeys: true) {
            case .empty: outcome = .empty
            case .interrupted: continue
            case .damaged(let reason):
                outcome = .problem(TableVerifier.Problem(slot: slot, key: record.key, code: .damagedRecord, reason: reason))
            case .committed(let entity):
                let pixels = UnsafeRawBufferPointer(start: file.slot(slot), count: file.layout.imageBytes)
                defer { file.dropPages(slot: slot) }
                outcome = CRC32.checksum(pixels) == record.pixelChecksum
                    ? .valid(Valid(entity: entity, generation: before))
                    : .problem(TableVerifier.Problem(slot: slot, key: record.key, code: .pixelChecksumMismatch,
                                                     reason: "pixel checksum mismatch"))
            }
            itc_fence_acquire()
            if record.generation == before { return outcome }
        }
        return .unsettled(record.generation)
    }

    /// Gives a writer in the middle of a write a moment to finish it.
    private static func pause(_ attempt: Int) {
        if attempt == 1 { _ = sched_yield() } else { usleep(1000) }
    }
}

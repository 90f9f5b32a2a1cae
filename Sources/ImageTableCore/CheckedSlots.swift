import CTableSupport
import Foundation

/// The slots whose pixels a writer has found to match their record's CRC-32 since it opened the
/// table: one bit per slot, read and set from any thread without a lock.
///
/// A writer that publishes without flushing (``ImageTableWriter/Durability/processCrashOnly``,
/// the runtime cache's default) can lose a power cut's race: the committed record reaches the
/// disk, the pixels it describes do not, and the slot holds what an evicted entry left there.
/// Such an entry passes every check of its record, and its source ID matches, so a cache would
/// serve another entity's image as a hit for good. The writer's reads therefore check each
/// slot's pixels once, at the first read after the open (a few microseconds for a 90 KB slot),
/// and a slot that fails is a miss, which the cache fetches and draws again.
///
/// A bit is never cleared: while the writer holds the table's lock, no other process writes it,
/// and pixels this process writes are the ones their record describes for as long as it lives.
///
/// The bits are anonymous memory mapped at the open and touched only as slots are checked: a
/// table of 100 million slots needs 12.5 MB of them, which every process opening it for writing
/// (a bake, each of its workers) held resident when they were zeroed at once, read or not.
final class CheckedSlots: @unchecked Sendable {
    private let words: UnsafeMutablePointer<UInt64>?
    private let count: Int

    /// No slot checked yet.
    ///
    /// - Parameter capacity: the table's slots.
    init(capacity: Int) {
        count = max(1, (capacity + 63) / 64)
        // Zero pages the kernel supplies when first touched. Without the memory (a limit on
        // address space), no slot is ever noted: every read checks its pixels.
        let mapping = mmap(nil, count * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        words = mapping == MAP_FAILED ? nil : mapping?.bindMemory(to: UInt64.self, capacity: count)
    }

    deinit { if let words { munmap(words, count * 8) } }

    /// Whether `slot`'s pixels were found sound.
    func contains(_ slot: Int) -> Bool {
        guard let words, slot >= 0, slot / 64 < count else { return false }
        return itc_load_relaxed_u64(words + slot / 64) >> UInt64(slot % 64) & 1 == 1
    }

    /// Notes that `slot`'s pixels matched their record.
    func insert(_ slot: Int) {
        guard let words, slot >= 0, slot / 64 < count else { return }
        itc_or_relaxed_u64(words + slot / 64, 1 << UInt64(slot % 64))
    }
}

import CTableSupport

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
final class CheckedSlots: @unchecked Sendable {
    private let words: UnsafeMutablePointer<UInt64>
    private let count: Int

    /// No slot checked yet.
    ///
    /// - Parameter capacity: the table's slots.
    init(capacity: Int) {
        count = max(1, (capacity + 63) / 64)
        words = .allocate(capacity: count)
        words.initialize(repeating: 0, count: count)
    }

    deinit { words.deallocate() }

    /// Whether `slot`'s pixels were found sound.
    func contains(_ slot: Int) -> Bool {
        guard slot >= 0, slot / 64 < count else { return false }
        return itc_load_relaxed_u64(words + slot / 64) >> UInt64(slot % 64) & 1 == 1
    }

    /// Notes that `slot`'s pixels matched their record.
    func insert(_ slot: Int) {
        guard slot >= 0, slot / 64 < count else { return }
        itc_or_relaxed_u64(words + slot / 64, 1 << UInt64(slot % 64))
    }
}

import CTableSupport
import Foundation

/// One 256-byte index record in the mapping (`docs/FORMAT.md`, "Index records").
///
/// A thin pointer wrapper: it never copies the record, so reads through it see a concurrent
/// writer's stores; callers use ``generation`` as a seqlock around anything that must be
/// consistent.
struct IndexRecord {
    static let stateEmpty: UInt32 = 0
    static let stateCommitted: UInt32 = 1
    /// Record bytes covered by `recordChecksum`.
    static let checksummed = 24..<256
    static let keyOffset = 96

    let base: UnsafeMutableRawPointer

    /// The seqlock counter, loaded with acquire ordering.
    var generation: UInt64 { itc_load_acquire_u64(base) }

    /// The seqlock counter as a reader starts with it: while it is odd on a committed record (a
    /// record-only update, ``ImageTableWriter/updateSourceModified(_:)``, holds a live entry odd
    /// for a few stores), loaded again for a moment, so that a lookup does not call an entry
    /// that never went away absent. A write that takes longer (a replacement, which empties the
    /// record at once; a killed writer's) is still seen odd, after at most a few microseconds.
    var settledGeneration: UInt64 {
        var g = generation
        var spins = 0
        while g & 1 == 1 && spins < 256 && state == Self.stateCommitted {
            itc_cpu_pause()
            g = generation
            spins += 1
        }
        return g
    }

    /// The write side's opening of the seqlock (Linux's `write_seqcount_begin`): stores the odd
    /// generation, then a release fence, so that none of the stores that follow (the record's
    /// fields, the slot's pixels) can become visible before the odd value does. A release *store*
    /// of the odd value would only order what came before it; on ARM64 a reader could then see
    /// new pixels under the old even generation and call torn pixels whole.
    ///
    /// - Parameter odd: the odd generation.
    func beginWrite(_ odd: UInt64) {
        precondition(odd & 1 == 1, "a write begins with an odd generation")
        itc_store_relaxed_u64(base, odd)
        itc_fence_release()
    }

    /// The write side's close (`write_seqcount_end`): a release store of the even generation, so
    /// every store before it (pixels, fields, `state`) is visible before it is.
    ///
    /// - Parameter even: the even generation.
    func endWrite(_ even: UInt64) {
        precondition(even & 1 == 0, "a write ends with an even generation")
        itc_store_release_u64(base, even)
    }

    var recency: UInt64 { base.loadLE(UInt64.self, at: 8) }
    /// Recency is a hint that other processes may also store; relaxed is enough.
    func setRecency(_ value: UInt64) { itc_store_relaxed_u64(base + 8, value.littleEndian) }

    var state: UInt32 { base.loadLE(UInt32.self, at: 16) }
    var storedChecksum: UInt32 { base.loadLE(UInt32.self, at: 20) }
    var entityUUID: UUID { UUID(uuid: base.loadUnaligned(fromByteOffset: 24, as: uuid_t.self)) }
    var sourceUUID: UUID { UUID(uuid: base.loadUnaligned(fromByteOffset: 40, as: uuid_t.self)) }
    var pixelChecksum: UInt32 { base.loadLE(UInt32.self, at: 56) }
    var keyLength: Int { Int(base.loadLE(UInt16.self, at: 60)) }
    var familyTag: UInt16 { base.loadLE(UInt16.self, at: 62) }
    var contentRect: PixelRect {
        PixelRect(x: Int(base.loadLE(UInt32.self, at: 64)), y: Int(base.loadLE(UInt32.self, at: 68)),
                  width: Int(base.loadLE(UInt32.self, at: 72)), height: Int(base.loadLE(UInt32.self, at: 76)))
    }
    var writtenAt: UInt64 { base.loadLE(UInt64.self, at: 80) }
    /// The source's modification time in nanoseconds since 1970 (version 2; 0 when unknown).
    var sourceModifiedNs: Int64 { base.loadLE(Int64.self, at: 88) }

    /// The key bytes, or `nil` when the length field is out of range.
    var keyBytes: UnsafeRawBufferPointer? {
        let n = keyLength
        guard n <= TableLimits.maxKeyBytes else { return nil }
        return UnsafeRawBufferPointer(start: base + Self.keyOffset, count: n)
    }

    /// The key, or `nil` when it is not valid UTF-8 or too long.
    var key: String? { keyBytes.flatMap { String(validating: $0, as: UTF8.self) } }

    /// ``key`` where the record's checksum holds, so that the key is the one its writer wrote:
    /// what a notice about a record otherwise unfit to serve may name.
    var trustedKey: String? { storedChecksum == computeChecksum() ? key : nil }

    /// Whether an empty record still has non-zero checksum, UUID or pixel-checksum fields.
    /// Writers zero all of them when a record becomes empty, so this means its `state` was damaged.
    var hasLeftoverFields: Bool {
        (20..<60).contains { base.load(fromByteOffset: $0, as: UInt8.self) != 0 }
    }

    /// The CRC-32 of bytes 24 ..< 256, as it is now.
    func computeChecksum() -> UInt32 {
        CRC32.checksum(UnsafeRawBufferPointer(start: base + Self.checksummed.lowerBound, count: Self.checksummed.count))
    }

    /// Whether a committed record is self-consistent: checksum, key length and UTF-8, key ↔ UUID
    /// (when `checkKey`), content rectangle. Returns the reason it is not, or `nil` when it is.
    func damage(width: Int, height: Int, checkKey: Bool) -> String? {
        guard storedChecksum == computeChecksum() else { return "record checksum mismatch" }
        guard let bytes = keyBytes else { return "key length \(keyLength) exceeds \(TableLimits.maxKeyBytes)" }
        guard String(validating: bytes, as: UTF8.self) != nil else { return "key is not valid UTF-8" }
        guard !checkKey || EntityKey.uuid5(name: bytes) == entityUUID else { return "key does not match entity UUID" }
        let r = contentRect
        guard r.x + r.width <= width, r.y + r.height <= height else { return "content rectangle lies outside the slot" }
        return nil
    }

    /// Writes every field but `generation`, `recency` and `state`, then the record checksum.
    func writeFields(entity: UUID, source: UUID, key: String, pixelChecksum: UInt32, rect: PixelRect, writtenAt: UInt64,
                     sourceModifiedNs: Int64 = 0, familyTag: UInt16 = FamilyTag.unknown) {
        UnsafeMutableRawBufferPointer(start: base + 24, count: 232).initializeMemory(as: UInt8.self, repeating: 0)
        base.storeBytes(of: entity.uuid, toByteOffset: 24, as: uuid_t.self)
        base.storeBytes(of: source.uuid, toByteOffset: 40, as: uuid_t.self)
        base.storeLE(pixelChecksum, at: 56)
        let utf8 = Array(key.utf8)
        base.storeLE(UInt16(utf8.count), at: 60)
        base.storeLE(familyTag, at: 62)
        base.storeLE(UInt32(rect.x), at: 64)
        base.storeLE(UInt32(rect.y), at: 68)
        base.storeLE(UInt32(rect.width), at: 72)
        base.storeLE(UInt32(rect.height), at: 76)
        base.storeLE(writtenAt, at: 80)
        base.storeLE(sourceModifiedNs, at: 88)
        (base + Self.keyOffset).copyMemory(from: utf8, byteCount: utf8.count)
        base.storeLE(computeChecksum(), at: 20)
    }

    /// The odd generation a write that begins now takes: one past an even generation, and two
    /// past an odd one (a write a killed writer left), so that no generation is seen twice.
    var nextWriteGeneration: UInt64 {
        let g = generation
        return (g | 1) &+ (g & 1 == 1 ? 2 : 0)
    }

    /// Changes fields of a committed record under its seqlock: its generation odd, `change`, then
    /// even again, 2 more than before, so that a reader never takes a half-changed record for a
    /// whole one. The caller holds the writer's lock.
    func rewrite(_ change: () -> Void) {
        let odd = generation | 1
        beginWrite(odd)
        change()
        endWrite(odd &+ 1)
    }

    /// Stores a new `sourceModified` and the checksum that covers it, leaving every other field
    /// as it is. The caller holds the seqlock open: between the two stores the checksum is wrong.
    func setSourceModified(_ ns: Int64) {
        base.storeLE(ns, at: 88)
        base.storeLE(computeChecksum(), at: 20)
    }

    /// Stores a family tag and the checksum that covers it, leaving every other field as it is.
    /// The caller holds the seqlock open.
    func setFamilyTag(_ tag: UInt16) {
        base.storeLE(tag, at: 62)
        base.storeLE(computeChecksum(), at: 20)
    }

    /// Marks the record committed; the caller then makes `generation` even.
    func setCommitted() { itc_store_release_u32(base + 16, Self.stateCommitted.littleEndian) }

    /// Clears everything but `generation`, leaving an empty record.
    func clear() {
        UnsafeMutableRawBufferPointer(start: base + 8, count: TableLimits.recordBytes - 8)
            .initializeMemory(as: UInt8.self, repeating: 0)
    }
}

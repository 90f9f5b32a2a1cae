import CTableSupport
import Foundation

/// The persisted hash index of a version 2 table (`docs/FORMAT.md`, "Hash index"): two areas of
/// 8-byte buckets, one active, each an open-addressing table with linear probing from an
/// entity's home bucket. A bucket is `0` (empty) or `tag << 32 | (slot + 1)`.
///
/// The index only says where to look. Every hit is checked against the record it leads to
/// (committed, the same entity, under the record's seqlock), so a stale, damaged or forged
/// bucket can cost a miss but never serve another entry's pixels. Writers keep one promise that
/// makes misses impossible for committed entries: a committed record's bucket lies in the
/// active area, on its entity's probe path, with no empty bucket before it. They never empty a
/// bucket of the active area; they rebuild into the other area and switch.
enum BucketIndex {
    /// The home position and tag of an entity: bytes 0 ..< 8 and 8 ..< 12 of its UUID, read
    /// little-endian. Entity UUIDs are SHA-1 output, so both are uniformly spread.
    @inline(__always)
    static func hash(_ entity: UUID) -> (home: UInt64, tag: UInt32) {
        withUnsafeBytes(of: entity.uuid) { raw in
            (UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
             UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        }
    }

    /// The bucket value for `entity` in `slot`.
    @inline(__always)
    static func bucket(tag: UInt32, slot: Int) -> UInt64 { UInt64(tag) << 32 | UInt64(slot + 1) }
}

extension TableFile {
    /// The bucket at `index` of area `area`.
    @inline(__always)
    func bucketAddress(area: Int, index: Int) -> UnsafeMutableRawPointer {
        base + layout.bucketAreaOffset(area) + index * TableLimits.bucketBytes
    }

    /// Visits, in probe order, the slots of the active area's buckets that carry `entity`'s tag,
    /// until `visit` returns `true` or the probe reaches an empty bucket. Returns the selector it
    /// probed under, for the caller's check that no rebuild switched areas meanwhile.
    ///
    /// Bounded by the number of buckets, so a hostile file with no empty bucket ends too.
    @inline(__always)
    func probe(_ entity: UUID, _ visit: (Int) throws -> Bool) rethrows -> UInt64 {
        let selector = indexSelector
        let (home, tag) = BucketIndex.hash(entity)
        let count = layout.bucketCount, mask = count - 1
        let area = base + layout.bucketAreaOffset(Int(selector & 1))
        var i = Int(truncatingIfNeeded: home) & mask
        for _ in 0..<count {
            let bucket = UInt64(littleEndian: itc_load_relaxed_u64(area + i * TableLimits.bucketBytes))
            if bucket == 0 { break }
            if UInt32(truncatingIfNeeded: bucket >> 32) == tag {
                let slot = Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
                if slot >= 0 && slot < layout.capacity, try visit(slot) { break }
            }
            i = (i + 1) & mask
        }
        return selector
    }

    /// Runs `body` on `entity`'s pixels, found through the index: each slot the probe offers
    /// is read under its seqlock until one holds the entity. A miss counts only if no writer
    /// switched index areas meanwhile. Takes no lock: the index is only ever changed by single
    /// aligned stores, and a rebuild shows in the selector (`docs/FORMAT.md`, "Hash index").
    ///
    /// - Returns: `body`'s result and the slot, or `nil` on a miss.
    /// - Throws: what `body` throws, or `busy` after eight torn reads in a row.
    @inline(__always)
    func indexedRead<R>(_ entity: UUID, source: UUID?, _ body: (ImageView) throws -> R) throws -> (result: R, slot: Int)? {
        for _ in 0..<8 {
            var found: (result: R, slot: Int)?
            var changed = false
            let selector = try probe(entity) { slot in
                switch try read(slot: slot, entity: entity, source: source, body) {
                case .hit(let r): found = (r, slot)
                case .changed: changed = true
                case .miss: return false
                case .refused: break
                }
                return true
            }
            if let found { return found }
            if changed { continue }
            itc_fence_acquire()
            if indexSelector == selector { return nil }
        }
        throw ImageTableError(.busy, "entry changed during eight consecutive reads", path: path)
    }

    /// The slot the index leads to for `entity`, as a reader finds it: the first slot on the
    /// probe path whose record is committed with that entity, or `nil`. Retries while a writer
    /// switches areas.
    func indexedSlot(of entity: UUID) -> Int? {
        for _ in 0..<8 {
            var found: Int?
            let selector = probe(entity) { slot in
                let record = record(slot)
                guard record.settledGeneration & 1 == 0, record.state == IndexRecord.stateCommitted, record.entityUUID == entity else { return false }
                found = slot
                return true
            }
            if found != nil { return found }
            itc_fence_acquire()
            if indexSelector == selector { return nil }
        }
        return nil
    }
}

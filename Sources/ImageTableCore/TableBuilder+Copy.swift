import CTableSupport
import Foundation

extension TableBuilder {
    /// What ``append(copying:from:recency:)`` did with one entry.
    public enum CopyOutcome: Sendable, Equatable {
        /// The entry is in the new table, its pixels checked against its record's checksum.
        case copied
        /// Its pixels differ from the checksum in its record: damage, left out.
        case pixelChecksumMismatch
        /// A writer changed or removed the entry while it was copied: left out.
        case changed
    }

    /// Appends a copy of an entry of another table with the same layout: its record's fields
    /// and its pixels, read with `pread` (no page of the source stays mapped) under the record's
    /// seqlock and checked against the record's pixel checksum. Nothing is decoded.
    ///
    /// - Parameters:
    ///   - info: the entry, as ``ImageTableReader/entries()`` listed it.
    ///   - reader: the table it is in.
    ///   - recency: the recency stamp to record.
    /// - Returns: what was done; only ``CopyOutcome/copied`` appends.
    /// - Throws: ``ImageTableError`` `invalidArgument` for a table of another layout, `io` or
    ///   `noSpace` when reading or writing fails.
    public func append(copying info: EntryInfo, from reader: ImageTableReader, recency: UInt64) throws(ImageTableError) -> CopyOutcome {
        let source = reader.file, l = layout, s = source.layout
        guard s.width == l.width, s.height == l.height, s.style == l.style, s.imageBytes == l.imageBytes else {
            throw ImageTableError(.invalidArgument, "the tables have different layouts", path: reader.path)
        }
        guard info.slot >= 0, info.slot < s.capacity else { return .changed }
        let record = source.record(info.slot)
        let before = record.generation
        guard before & 1 == 0, record.state == IndexRecord.stateCommitted, record.entityUUID == info.entityUUID,
              record.sourceUUID == info.sourceUUID, record.pixelChecksum == info.pixelChecksum, source.slotIsBacked(info.slot) else {
            return .changed
        }
        let pixels = nextPixels
        switch SystemIO.read(source.fd, into: pixels, at: s.slotOffset(info.slot)) {
        case .success(let n) where n == pixels.count: break
        case .success: return .changed
        case .failure(let error): throw ImageTableError(.io, "could not read slot \(info.slot): \(error.reason)", path: reader.path)
        }
        itc_fence_acquire()
        guard record.generation == before else { return .changed }
        guard CRC32.checksum(UnsafeRawBufferPointer(pixels)) == info.pixelChecksum else { return .pixelChecksumMismatch }
        try append(Entry(info: info, recency: recency), pixels: UnsafeRawBufferPointer(pixels))
        return .copied
    }
}

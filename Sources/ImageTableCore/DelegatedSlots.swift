import Foundation

/// Write access to slots that a writer in another process has reserved, for worker processes
/// that render pixels while the writer (which holds the lock) reserves and publishes.
///
/// A worker never publishes anything: it only fills memory. Before handing out a slot it checks
/// that the table is the one the writer meant (same parameter hash) and that the slot's record
/// still carries the reservation's odd generation, so a confused or late worker can never write
/// into a published entry. The writer computes the checksum and commits after the worker
/// reports, exactly as for its own fills.
public final class DelegatedSlots: @unchecked Sendable {
    let file: TableFile

    /// Opens `path` for filling reserved slots; takes no lock.
    ///
    /// - Parameters:
    ///   - path: the table file.
    ///   - parametersHash: the hash the writer opened the table with.
    /// - Throws: ``ImageTableError`` `invalidArgument` when the table has other parameters, or any
    ///   error opening it.
    public init(path: String, parametersHash: [UInt8]) throws(ImageTableError) {
        file = try TableFile(path: path, writable: true)
        guard file.header.parametersHash == parametersHash else {
            throw ImageTableError(.invalidArgument, "table was rebuilt with other parameters since the slot was reserved", path: path)
        }
    }

    /// The table's layout.
    public var layout: TableLayout { file.layout }

    /// The parameter hash the table was opened with.
    public var parametersHash: [UInt8] { file.header.parametersHash }

    /// Writes the pixels of a reserved slot: `imageBytes` bytes in the table's style, rendered by
    /// the caller in its own memory, or ``TableLayout/writtenSlotBytes`` or `slotStride` bytes:
    /// the image, then the slot's padding, which the format keeps zero.
    ///
    /// The slot is written with `pwrite`, not through a mapping: a store to a mapped page of the
    /// file that this process has not touched yet is a page fault with the file system's
    /// block bookkeeping (several microseconds a page, more than rendering a small source into
    /// it), where `pwrite` copies whole pages into the page cache. Passing the padding too makes
    /// every page of the write a whole page: a write that ends inside a page makes the file
    /// system zero the rest of it, or first read it from the disk where the slot held an entry
    /// whose pages are no longer cached (a re-bake the next day), a wait per slot. The
    /// reservation is checked right before the write, so a confused or late worker cannot
    /// overwrite a published entry.
    ///
    /// - Parameters:
    ///   - pixels: exactly `imageBytes`, `writtenSlotBytes` or `slotStride` bytes.
    ///   - slot: the reserved slot.
    ///   - generation: the reservation's ``SlotReservation/generation``.
    /// - Throws: ``ImageTableError`` `invalidArgument` when the slot is out of range, not backed by the
    ///   file, no longer reserved with that generation, or `pixels` has another size; `io` when
    ///   the write fails.
    public func write(_ pixels: UnsafeRawBufferPointer, slot: Int, generation: UInt64) throws(ImageTableError) {
        try checkReservation(slot: slot, generation: generation)
        let l = file.layout, n = pixels.count
        guard n == l.imageBytes || n == l.writtenSlotBytes || n == l.slotStride else {
            throw ImageTableError(.invalidArgument, "\(pixels.count) bytes for a slot of \(file.layout.imageBytes)", path: file.path)
        }
        if let error = SystemIO.writeAll(file.fd, pixels, at: file.layout.slotOffset(slot)) {
            throw ImageTableError(.io, "could not write slot \(slot): \(error.reason)", path: file.path)
        }
    }

    /// Checks that `slot` is still reserved with `generation` and lies inside the file.
    ///
    /// - Parameters:
    ///   - slot: the reserved slot.
    ///   - generation: the reservation's ``SlotReservation/generation``.
    /// - Throws: ``ImageTableError`` `invalidArgument` when it is not.
    public func checkReservation(slot: Int, generation: UInt64) throws(ImageTableError) {
        guard slot >= 0, slot < file.layout.capacity, generation & 1 == 1 else {
            throw ImageTableError(.invalidArgument, "slot \(slot) with generation \(generation) is not a reservation", path: file.path)
        }
        // Read with pread, not through the mapping: a worker checks every reservation of a
        // bake, and mapping the records' pages would leave a worker holding the whole index.
        var fields = (generation: UInt64(0), recency: UInt64(0), state: UInt32(0))
        let read = withUnsafeMutableBytes(of: &fields) { raw in
            SystemIO.read(file.fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<20]), at: file.layout.recordOffset(slot))
        }
        guard case .success(20) = read, UInt64(littleEndian: fields.generation) == generation,
              UInt32(littleEndian: fields.state) == IndexRecord.stateEmpty, file.slotIsBacked(slot) else {
            throw ImageTableError(.invalidArgument, "slot \(slot) is no longer reserved with generation \(generation)", path: file.path)
        }
    }
}

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

    /// The memory of a reserved slot: `imageBytes` bytes in the table's style.
    ///
    /// - Parameters:
    ///   - slot: the reserved slot.
    ///   - generation: the reservation's ``SlotReservation/generation``.
    /// - Returns: the slot's memory.
    /// - Throws: ``ImageTableError`` `invalidArgument` when the slot is out of range, not backed by the
    ///   file, or no longer reserved with that generation.
    public func pixels(slot: Int, generation: UInt64) throws(ImageTableError) -> UnsafeMutableRawBufferPointer {
        guard slot >= 0, slot < file.layout.capacity, generation & 1 == 1 else {
            throw ImageTableError(.invalidArgument, "slot \(slot) with generation \(generation) is not a reservation", path: file.path)
        }
        let record = file.record(slot)
        guard record.generation == generation, record.state == IndexRecord.stateEmpty, file.slotIsBacked(slot) else {
            throw ImageTableError(.invalidArgument, "slot \(slot) is no longer reserved with generation \(generation)", path: file.path)
        }
        return UnsafeMutableRawBufferPointer(start: file.slot(slot), count: file.layout.imageBytes)
    }

    /// Unmaps a filled slot's pages from this process (the data stays in the file), so a worker's
    /// resident size does not grow with the tables it fills.
    ///
    /// - Parameter slot: a slot this worker filled.
    public func releaseMappedPages(slot: Int) {
        guard slot >= 0, slot < file.layout.capacity else { return }
        file.dropPages(slot: slot)
    }
}

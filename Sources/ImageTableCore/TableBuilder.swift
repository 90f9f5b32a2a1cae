import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a new version 2 table whole, entry after entry into slots 0, 1, 2…, each record and
/// bucket as a writer would leave them: how a version 1 table is upgraded and how
/// `imagetable merge` makes its tables.
///
/// The file is invisible under its final name until the caller renames it (or the directory
/// that holds it), so no reader can see it half made and no seqlock is needed; one `fdatasync`
/// in ``finish(clock:)``, before that rename, makes it durable. What it writes depends only on the
/// header and the entries given, in order, so equal inputs give byte-identical files.
public final class TableBuilder {
    /// One entry to append: its record's fields (``EntryInfo``, whose `slot` is ignored) and a
    /// recency stamp of the builder's choosing.
    public struct Entry: Sendable {
        /// The record's fields; `slot` is where the entry came from, not where it goes.
        public let info: EntryInfo
        /// The recency stamp to record.
        public let recency: UInt64

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - info: the record's fields.
        ///   - recency: the recency stamp to record.
        public init(info: EntryInfo, recency: UInt64) {
            self.info = info
            self.recency = recency
        }
    }

    /// The file being written.
    public let path: String
    /// Entries appended so far.
    public private(set) var count = 0
    /// The table's layout.
    public var layout: TableLayout { file.layout }
    let file: TableFile
    private var index: IndexWriter
    private var clock: UInt64 = 0
    /// The slots appended since the last write, laid out as in the file (each at its stride,
    /// padding zero): written with one `pwrite` when full or at ``finish(clock:)``, where a
    /// `pwrite` per slot cost a system call per entry (a seventh of a merge of 4 KiB slots).
    let batch: UnsafeMutableRawBufferPointer
    /// Slots the batch holds when full: about 1 MiB of them, at least one.
    private let batchSlots: Int
    /// The first slot in the batch, and how many it holds.
    private var batchFirst = 0, batchCount = 0

    /// Creates `path` (which must not exist) as an empty version 2 table with `header`'s format
    /// fields, mode from its protection.
    ///
    /// - Parameters:
    ///   - path: the new file.
    ///   - header: the header to write; its layout must be version 2.
    /// - Throws: ``ImageTableError`` (`io`, `noSpace`, `invalidArgument` for a version 1 layout).
    public init(path: String, header: TableHeader) throws(ImageTableError) {
        guard header.layout.formatVersion == 2 else {
            throw ImageTableError(.invalidArgument, "a table is built in format version 2", path: path)
        }
        self.path = path
        let fd = Posix.retrying { open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw Posix.error("create", path: path) }
        do throws(ImageTableError) {
            defer { close(fd) }
            guard fchmod(fd, mode_t(header.protection.permissions)) == 0 else { throw Posix.error("fchmod", path: path) }
            try TableCreation.write(header, to: fd, path: path)
        } catch {
            unlink(path)
            throw error
        }
        file = try TableFile(path: path, writable: true)
        index = IndexWriter(file: file)
        try index.allocateActiveAreaWhereHolesFault()
        batchSlots = max(1, (1 << 20) / header.layout.slotStride)
        batch = UnsafeMutableRawBufferPointer.allocate(byteCount: batchSlots * header.layout.slotStride, alignment: 64)
        batch.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { batch.deallocate() }

    /// Where the next slot's pixels go in the batch: ``append(copying:from:recency:)`` reads into
    /// it, so that the pixels are copied once.
    var nextPixels: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: batch[batchCount * layout.slotStride ..< batchCount * layout.slotStride + layout.imageBytes])
    }

    /// The header of a version 2 table with `header`'s format fields and page size.
    ///
    /// - Parameters:
    ///   - header: a header of either version.
    ///   - createdAt: the creation time to record.
    /// - Throws: ``ImageTableError`` `invalidLayout` when the capacity does not fit version 2.
    public static func header(like header: TableHeader, createdAt: UInt64) throws(ImageTableError) -> TableHeader {
        let l = header.layout
        let layout = try TableLayout(width: l.width, height: l.height, style: l.style, capacity: l.capacity, pageSize: l.pageSize)
        return TableHeader(layout: layout, name: header.name, family: header.family, protection: header.protection,
                           scale: header.scale, parametersHash: header.parametersHash, createdAt: createdAt)
    }

    /// Appends an entry: its pixels into the next slot, its record committed, its bucket.
    ///
    /// - Parameters:
    ///   - entry: the record's fields and recency.
    ///   - pixels: exactly `imageBytes` bytes in the table's style.
    /// - Throws: ``ImageTableError`` `full` past the capacity, `invalidArgument` for a wrong size,
    ///   `io`/`noSpace` when writing fails.
    public func append(_ entry: Entry, pixels: UnsafeRawBufferPointer) throws(ImageTableError) {
        let l = file.layout, info = entry.info
        guard count < l.capacity else { throw ImageTableError(.full, "the table holds \(l.capacity) entries", path: path) }
        guard pixels.count == l.imageBytes else {
            throw ImageTableError(.invalidArgument, "\(pixels.count) bytes for a slot of \(l.imageBytes)", path: path)
        }
        let slot = count
        try file.ensureBacked(slot: slot)
        let target = nextPixels
        if pixels.baseAddress != UnsafeRawPointer(target.baseAddress) { target.copyMemory(from: pixels) }
        let record = file.record(slot)
        // Generation 2, as a writer's first write leaves a record (and export's): a committed
        // record of generation 0 reads the same as the zero page a closed writer maps over its
        // table, so a read that a close overtook took zeros for the entry's pixels.
        record.beginWrite(1)
        record.writeFields(entity: info.entityUUID, source: info.sourceUUID, key: info.key, pixelChecksum: info.pixelChecksum,
                           rect: info.contentRect, writtenAt: info.writtenAt, sourceModifiedNs: info.sourceModifiedNs,
                           familyTag: info.familyTag)
        record.setRecency(entry.recency)
        record.setCommitted()
        record.endWrite(2)
        do {
            _ = try index.insert(entity: info.entityUUID, slot: slot)
        } catch let error as ImageTableError {
            throw error
        } catch {
            throw ImageTableError(.invalidArgument, "two entries for the key \(PrintableText.quoted(info.key))", path: path)
        }
        count += 1
        batchCount += 1
        if batchCount == batchSlots { try writeBatch() }
        file.recordsInUse = UInt64(count)
        clock = max(clock, entry.recency)
        if count % 4096 == 0 { file.dropPages(offset: l.recordOffset(count - 4096), count: 4096 * TableLimits.recordBytes) }
    }

    /// Writes the live header (the clock, the entry count) and flushes the whole file to disk.
    ///
    /// - Parameter clock: the clock to record, at least the largest recency appended.
    /// - Throws: ``ImageTableError`` `io` when the flush fails.
    public func finish(clock: UInt64 = 0) throws(ImageTableError) {
        try writeBatch()
        file.base.storeLE(max(self.clock, clock), at: TableHeader.clockOffset)
        file.entryCount = UInt64(count)
        try file.flushAll()
        file.dropPages(offset: 0, count: file.layout.maxFileBytes)
    }

    /// Writes the batch's slots into the file, each whole to the end of its stride (the file is
    /// backed that far: ``TableFile/ensureBacked(slot:)``).
    private func writeBatch() throws(ImageTableError) {
        guard batchCount > 0 else { return }
        let l = layout, first = batchFirst, last = batchFirst + batchCount - 1
        let bytes = UnsafeRawBufferPointer(rebasing: batch[0 ..< batchCount * l.slotStride])
        batchFirst += batchCount
        batchCount = 0
        if let error = SystemIO.writeAll(file.fd, bytes, at: l.slotOffset(first)) {
            let slots = first == last ? "slot \(first)" : "slots \(first)–\(last)"
            throw ImageTableError(error.errno == ENOSPC ? .noSpace : .io, "could not write \(slots): \(error.reason)", path: path)
        }
    }
}

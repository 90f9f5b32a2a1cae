import CTableSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Sparse copies on tmpfs, checked at open: a file of its own, beside the open it guards.
extension TableFile {
    /// `n` bytes as the open's messages write them: `75.1 MiB`, or `12 KiB` below a mebibyte (a
    /// full file system's few holes read "0.0 MiB of holes, 0.0 MiB free").
    static func mebibytes(_ n: Int) -> String {
        n < 1_048_576 && n > -1_048_576 ? "\((n + 1023) / 1024) KiB" : String(format: "%.1f MiB", Double(n) / 1_048_576)
    }

    /// Refuses, or fills, a sparse copy of a table on tmpfs before it is mapped.
    ///
    /// `cp`, `rsync -S` and `tar -S` turn runs of zeros (empty buckets, clear pixels) into
    /// holes, and a table's index is sparse by design on other file systems. On tmpfs a read of
    /// a hole through a mapping allocates memory for it, and on a full tmpfs (a container's
    /// small `/dev/shm`) that read is SIGBUS: `verify`, `inspect` and a bake crashed. A table
    /// baked there has no hole where readers read: the header and the records in use, the
    /// active bucket area, the slots (writers allocate them on tmpfs), so holes there mark a
    /// copy. A writer allocates them, which fails cleanly when they do not fit; a reader, which
    /// must not change the file, goes on only while the file system has room for them all.
    ///
    /// - Parameters:
    ///   - header: the header as read; its live fields say which records and which bucket
    ///     area are in use.
    /// - Throws: ``ImageTableError`` `noSpace` when the holes cannot be backed.
    static func checkHoles(_ fd: Int32, size: Int, header: [UInt8], layout l: TableLayout, writable: Bool,
                           path: String) throws(ImageTableError) {
        guard itc_holes_fault(fd) != 0 else { return }
        func u64(_ offset: Int) -> Int { Int(truncatingIfNeeded: header[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
        var read: [Range<Int>] = [0..<size]
        if l.formatVersion >= 2 {
            // As `scanLimit` counts them: readers and `verify` look at every record of a backed
            // slot too (a stopped bake leaves slots reserved past `recordsInUse`).
            let backed = min(l.capacity, max(0, size - l.slotsOffset) / l.slotStride)
            let inUse = u64(TableHeader.recordsInUseOffset)
            let records = min(l.capacity, max(inUse < 0 || inUse > l.capacity ? l.capacity : inUse, backed))
            let area = l.bucketAreaOffset(u64(TableHeader.indexSelectorOffset) & 1)
            read = [0..<l.recordOffset(records), area..<area + l.bucketCount * TableLimits.bucketBytes, l.slotsOffset..<size]
        }
        read = read.map { $0.clamped(to: 0..<size) }.filter { !$0.isEmpty }
        var holes = read.reduce(0) { $0 + Int(itc_hole_bytes(fd, Int64($1.lowerBound), Int64($1.upperBound))) }
        // tmpfs also calls a hole what `posix_fallocate` reserved and nothing has written yet
        // (slots backed past a table's entries), whose memory is already taken: reading those
        // costs nothing, so no more holes can take memory than the file has unallocated.
        var st = stat()
        if fstat(fd, &st) == 0 { holes = min(holes, max(0, size - Int(st.st_blocks) * 512)) }
        guard holes > 0 else { return }
        // Holes come from a copy, or from a bake the full file system stopped before it could
        // allocate what it had begun (the bake said `no-space` then).
        let advice = "on tmpfs, reading a hole takes memory that is not there. A bake stopped by a full file system "
            + "leaves such holes, and so does a sparse copy (cp, rsync -S): free space there and bake again, "
            + "or copy the table with cp --sparse=never"
        if writable {
            // Allocated only, never filled: a worker opens the table to write slots without
            // its lock, while others may be writing into the very pages tmpfs calls holes.
            for range in read {
                let result = itc_allocate(fd, Int64(range.lowerBound), Int64(range.count))
                guard result == 0 else {
                    throw ImageTableError(.noSpace, "cannot fill the table's \(mebibytes(holes)) of holes: \(String(cString: strerror(result))); "
                                          + advice, path: path, errno: result)
                }
            }
        } else {
            let free = Int(itc_free_bytes(fd))
            guard free < 0 || free >= holes else {
                throw ImageTableError(.noSpace, "the table has \(mebibytes(holes)) of holes and its file system "
                                      + "\(mebibytes(free)) free; " + advice, path: path)
            }
        }
    }
}

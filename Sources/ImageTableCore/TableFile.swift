import CTableSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open, validated, memory-mapped table file.
///
/// The whole `maxFileBytes` range is mapped once, whatever the file's current size, so pointers
/// into it stay valid for the life of the handle and growth never remaps. Only pages inside the
/// file are ever touched (touching past the end is SIGBUS): readers check a slot against
/// ``fileSize`` before use, and writers extend the file with `posix_fallocate` first.
final class TableFile: @unchecked Sendable {
    let path: String
    let fd: Int32
    let header: TableHeader
    let base: UnsafeMutableRawPointer
    let writable: Bool
    /// The permissions a writer found looser for reading than the table's protection allows
    /// and tightened (`chmod`), as `(from, to)`: a file this user owns, whose mode an artifact
    /// upload or a restore loosened; `nil` when they were as they should be. For a read-only
    /// open that plans as a writer (`asWriter`), what a writer would set, unchanged.
    let tightenedPermissions: (from: UInt16, to: UInt16)?
    /// A writer's slots whose pixels its reads found sound since the open (``CheckedSlots``);
    /// `nil` for a reader, whose tables a bake flushed before it published them.
    let checkedSlots: CheckedSlots?
    private let mappedBytes: Int
    /// The file size last observed; it only grows. Atomic because reader threads refresh it.
    private let observedSize: Atomic<Int>
    /// The end of the records this handle has allocated disk blocks for (version 2, whose index
    /// is a hole until it is used). Only a writer holding the lock changes it, under its mutex.
    private var allocatedRecordsEnd = 0

    var fileSize: Int { observedSize.load(ordering: .acquiring) }

    /// Whether reading a hole through the mapping allocates memory, and so faults when the file
    /// system is full (tmpfs): a writer then allocates the index areas it and readers probe.
    var holesFault: Bool { itc_holes_fault(fd) != 0 }

    var layout: TableLayout { header.layout }

    /// Opens and maps an existing table, checking its type, permissions and header.
    ///
    /// - Parameters:
    ///   - path: the table file.
    ///   - writable: whether to open for writing.
    ///   - asWriter: for a read-only open, accept permissions a writer would tighten (see
    ///     ``tightenedPermissions``) instead of refusing them, changing nothing: a dry run.
    /// - Throws: ``ImageTableError`` (`notATable`, `corrupt`, `insecureFile`, `io`, …).
    init(path: String, writable: Bool, asWriter: Bool = false) throws(ImageTableError) {
        self.path = path
        self.writable = writable
        let (fd, st) = try Self.openLinked(path, writable: writable)
        do throws(ImageTableError) {
            try Self.checkFileType(st, path: path)
            let headerBytes = try Posix.preadFully(fd, count: TableLimits.headerBytes, at: 0, path: path)
            let header = try headerBytes.withUnsafeBytes { raw in Result { () throws(ImageTableError) in try TableHeader.decode(raw) } }.get()
            // A writer mends a mode that only lets more users read its own file than the protection
            // allows (a CI artifact restored 0644): every bake stopped at such a table. One that
            // lets others write it is still refused: the table may have been changed.
            let mode = UInt16(st.st_mode & 0o7777), allowed = header.protection.permissions
            if mode & 0o022 == 0, mode & ~allowed != 0, st.st_uid == geteuid(),
               writable ? fchmod(fd, mode_t(mode & allowed)) == 0 : asWriter {
                tightenedPermissions = (mode, mode & allowed)
            } else {
                try Self.checkPermissions(st, protection: header.protection, path: path)
                tightenedPermissions = nil
            }
            let size = Int(st.st_size)
            guard size >= header.layout.slotsOffset else {
                throw ImageTableError(.corrupt, "file is \(size) bytes, shorter than its header and index (\(header.layout.slotsOffset))", path: path)
            }
            guard size <= header.layout.maxFileBytes else {
                throw ImageTableError(.corrupt, "file is \(size) bytes, longer than its layout allows (\(header.layout.maxFileBytes))", path: path)
            }
            try Self.checkHoles(fd, size: size, header: headerBytes, layout: header.layout, writable: writable, path: path)
            let protections = writable ? PROT_READ | PROT_WRITE : PROT_READ
            let mapping = mmap(nil, header.layout.maxFileBytes, protections, MAP_SHARED, fd, 0)
            guard let mapping, mapping != MAP_FAILED else {
                let error = Posix.error("mmap", path: path)
                guard error.errno == ENOMEM else { throw error }
                // A table maps its largest size at once, whatever it holds now: a limit on
                // address space below that fails here, where the error alone says nothing of why.
                throw ImageTableError(.io, "cannot map the table: \(error.message); it takes \(Self.mebibytes(header.layout.maxFileBytes)) "
                                      + "of address space (its size "
                                      + "when full), more than this process may have (ulimit -v), or the system's limit on "
                                      + "mappings (vm.max_map_count) was reached", path: path, errno: ENOMEM)
            }
            if header.layout.formatVersion >= 2 {
                // Buckets are read at random, one per lookup: no readahead. (Linux still maps
                // what the page cache holds of the 64 KiB around a fault, "fault-around": batch
                // writers unmap it, `ImageTableWriter.releaseMappedPages(slots:records:)`.)
                let l = header.layout, page = TableLayout.systemPageSize
                let start = l.bucketsOffset / page * page
                _ = madvise(mapping + start, l.slotsOffset - start, MADV_RANDOM)
            }
            self.fd = fd
            self.header = header
            checkedSlots = writable ? CheckedSlots(capacity: header.layout.capacity) : nil
            base = mapping
            mappedBytes = header.layout.maxFileBytes
            observedSize = Atomic(size)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        munmap(base, mappedBytes)
        close(fd)
    }

    /// Opens `path` and stats what it opened. A file whose last name went between the two (a
    /// writer rebuilding or upgrading the table renames a new file over it; a reader opening it
    /// then must not report a table with no link as insecure) is opened again by its path,
    /// which names the new table, a few times; a file still without a name is `not-found`.
    private static func openLinked(_ path: String, writable: Bool) throws(ImageTableError) -> (Int32, stat) {
        var attempts = 0
        while true {
            // O_NONBLOCK: a FIFO at the path would block the open until a writer came; opened at
            // once, it is refused by its type. (A regular file ignores the flag.)
            let fd = Posix.retrying { open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
            guard fd >= 0 else {
                if errno == ELOOP { throw ImageTableError(.insecureFile, "table is a symbolic link; refusing to follow it", path: path) }
                throw Posix.error("open", path: path)
            }
            var st = stat()
            guard fstat(fd, &st) == 0 else {
                let error = Posix.error("fstat", path: path)
                close(fd)
                throw error
            }
            guard st.st_nlink == 0 else { return (fd, st) }
            close(fd)
            attempts += 1
            // Each try loses only if a rename lands between its open and its fstat: rare, but a
            // loaded machine stretches that window, and with 8 tries 1 in 3,000 opens under a
            // rename every 50 µs gave up (a test on 2 busy cores), and with 32 once in a full
            // test run. Trying again costs an open: a path that was deleted, not replaced, ends
            // the loop at once (its open fails), so only a path replaced this often keeps it.
            guard attempts < 1000 else {
                throw ImageTableError(.notFound, "the table was deleted or replaced while it was being opened", path: path)
            }
        }
    }

    /// Refuses anything but a regular file with one link (a hard link would let another name
    /// outlive our permission checks, as OpenSSH refuses for keys).
    static func checkFileType(_ st: stat, path: String) throws(ImageTableError) {
        guard st.st_mode & S_IFMT == S_IFREG else {
            if st.st_mode & S_IFMT == S_IFDIR {
                throw ImageTableError(.isADirectory, "is a directory, not an image table", path: path)
            }
            throw ImageTableError(.notATable, "is not a regular file, so not an image table", path: path)
        }
        guard st.st_nlink == 1 else {
            throw ImageTableError(.insecureFile, "file has \(st.st_nlink) hard links; a table must have exactly one", path: path)
        }
    }

    /// Refuses group- or other-writable files and files readable by more than their protection allows.
    static func checkPermissions(_ st: stat, protection: ProtectionMode, path: String) throws(ImageTableError) {
        let mode = UInt16(st.st_mode & 0o7777)
        let octal = String(mode, radix: 8)
        guard mode & 0o022 == 0 else {
            throw ImageTableError(.insecureFile, "permissions 0\(octal) are group- or other-writable; run chmod go-w on it", path: path)
        }
        let allowed = protection.permissions
        guard mode & ~allowed == 0 else {
            throw ImageTableError(.insecureFile, "permissions 0\(octal) are looser than its protection '\(protection.rawValue)' "
                + "(0\(String(allowed, radix: 8))); run chmod \(String(allowed, radix: 8)) on it", path: path)
        }
    }

    func record(_ index: Int) -> IndexRecord { IndexRecord(base: base + layout.recordOffset(index)) }

    func slot(_ index: Int) -> UnsafeMutableRawPointer { base + layout.slotOffset(index) }

    /// Empties record `index` under its seqlock and counts the change, so that readers in other
    /// processes rescan. For writers (and repairs) holding the lock.
    func clearRecord(_ index: Int) {
        let record = record(index)
        let odd = record.generation | 1
        record.beginWrite(odd)
        record.clear()
        record.endWrite(odd &+ 1)
        bumpChangeCount()
    }

    /// Whether slot `index` lies inside the file, re-reading the size once if it seems not to
    /// (another process may have grown the file since we last looked).
    func slotIsBacked(_ index: Int) -> Bool {
        let end = layout.slotOffset(index) + layout.slotStride
        if end <= fileSize { return true }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        let size = min(Int(st.st_size), layout.maxFileBytes)
        observedSize.store(size, ordering: .releasing)
        return end <= size
    }

    /// Extends the file so that slots `0 ... index` are backed by disk blocks, and (version 2)
    /// allocates the blocks of the slot's record.
    ///
    /// Grows by up to 16 slots at a time, but by no more than about 4 MiB beyond the slot
    /// needed (one slot when slots are larger), so that growing (a change of the file's size,
    /// which the next flush must commit to the journal) stays rare for small slots, and a table
    /// of large ones grows by what is written, not by 16 of them at once.
    /// - Throws: `noSpace` when the disk is full, so no store can ever SIGBUS.
    func ensureBacked(slot index: Int) throws(ImageTableError) {
        try ensureBacked(through: index, growth: max(1, min(16, (4 << 20) / layout.slotStride)) * layout.slotStride)
    }

    /// Extends the file at once so that the first `count` slots (and their records) are backed
    /// by disk blocks: one allocation for what a writer knows it is about to fill, where
    /// ``ensureBacked(slot:)`` grows a few slots at a time.
    /// - Throws: `noSpace` when the disk cannot hold them; the file keeps its size.
    func ensureBacked(slots count: Int) throws(ImageTableError) {
        guard count > 0 else { return }
        try ensureBacked(through: min(count, layout.capacity) - 1, growth: 0)
    }

    /// Backs slots `0 ... index` and (version 2) the record of slot `index`, growing the file
    /// by at least `growth` bytes when it grows, or by just what slot `index` needs where that
    /// much does not fit.
    private func ensureBacked(through index: Int, growth: Int) throws(ImageTableError) {
        if layout.formatVersion >= 2 { try allocateRecord(index) }
        let fileSize = self.fileSize
        let needed = layout.slotOffset(index) + layout.slotStride
        guard needed > fileSize else { return }
        var target = min(layout.maxFileBytes, max(needed, fileSize + growth))
        var result = itc_reserve(fd, Int64(fileSize), Int64(target - fileSize))
        if result != 0 && target > needed {
            // The generous chunk may not fit where the one slot still does.
            target = needed
            result = itc_reserve(fd, Int64(fileSize), Int64(target - fileSize))
        }
        guard result == 0 else { throw Posix.error("posix_fallocate", path: path, errno: result) }
        observedSize.store(target, ordering: .releasing)
    }

    /// Allocates the blocks under record `index` (and the records before it) before a writer
    /// stores into it: the index of a version 2 table is a hole until it is used, and a store
    /// into a hole on a full disk would be SIGBUS. 64 KiB at a time.
    private func allocateRecord(_ index: Int) throws(ImageTableError) {
        let end = layout.recordOffset(index) + TableLimits.recordBytes
        guard end > allocatedRecordsEnd else { return }
        let chunkEnd = min(layout.bucketsOffset, (end + 65535) / 65536 * 65536)
        try allocate(offset: allocatedRecordsEnd, count: chunkEnd - allocatedRecordsEnd)
        allocatedRecordsEnd = chunkEnd
    }

    /// Allocates disk blocks for a range inside the file, keeping what is there; on tmpfs also
    /// writes zeros over what that reserved (``itc_fill_reserved``). For the table's writer, on a
    /// range nothing has stored into yet (records, buckets before their first use).
    func allocate(offset: Int, count: Int) throws(ImageTableError) {
        var result = itc_allocate(fd, Int64(offset), Int64(count))
        if result == 0 { result = itc_fill_reserved(fd, Int64(offset), Int64(count)) }
        guard result == 0 else { throw Posix.error("posix_fallocate", path: path, errno: result) }
    }

    /// Flushes `count` bytes at `offset` of the mapping to disk. Never retried: a failed flush
    /// means the data's fate is unknown, and the caller must not publish it.
    func flush(offset: Int, count: Int) throws(ImageTableError) {
        let page = Int(TableLayout.systemPageSize)
        let start = offset / page * page
        let length = offset + count - start
        guard msync(base + start, length, MS_SYNC) == 0 else { throw Posix.error("msync", path: path) }
    }

    /// Flushes every dirty page of the file.
    func flushAll() throws(ImageTableError) {
        #if canImport(Darwin)
        let result = Posix.retrying { fsync(fd) }
        #else
        let result = Posix.retrying { fdatasync(fd) }
        #endif
        guard result == 0 else { throw Posix.error("fdatasync", path: path) }
    }

    /// Unmaps a slot's pages from this process without touching the file: the page cache keeps
    /// them (dirty ones are written back as usual) and the next access faults them in again. A
    /// batch writer calls this for slots it is done with, so its resident size does not grow with
    /// the table.
    func dropPages(slot index: Int) {
        dropPages(offset: layout.slotOffset(index), count: layout.slotStride)
    }

    /// Unmaps the pages of any range of the mapping from this process (their data stays in the
    /// file and the page cache): scans of a large index call this as they go, so that what they
    /// have read does not stay resident.
    func dropPages(offset: Int, count: Int) {
        let page = TableLayout.systemPageSize
        let start = offset / page * page
        let end = min(mappedBytes, offset + count)
        guard end > start else { return }
        _ = madvise(base + start, end - start, MADV_DONTNEED)
    }

    /// Replaces the whole mapping, in place, with private zeroed memory: pointers into it stay
    /// valid, but nothing written through them reaches the file any more. For a writer that gives
    /// up the lock while other threads may still hold reservations.
    ///
    /// `MAP_NORESERVE`: the mapping is as large as the table may grow (tens of GB for a large
    /// format), more than memory and swap, which the kernel refuses to reserve (`ENOMEM`), and
    /// only pages written to after the detach ever take memory.
    ///
    /// - Returns: whether the mapping was replaced; when not (a system that reserves all the
    ///   same), writes through old pointers still reach the file.
    func detach() -> Bool {
        mmap(base, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) != MAP_FAILED
    }
}

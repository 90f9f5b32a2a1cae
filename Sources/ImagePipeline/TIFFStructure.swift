/// Where a classic TIFF's first directory and image data lie, read from its bytes without
/// libtiff: enough to tell a file cut short from other damage after a decode has failed.
///
/// A TIFF is a header (byte order, 42, the first directory's offset), directories of 12-byte
/// entries, and strips or tiles that the entries `StripOffsets`/`StripByteCounts` (273, 279) or
/// `TileOffsets`/`TileByteCounts` (324, 325) locate anywhere in the file. Writers such as
/// Pillow put the directory last, so a file cut anywhere has lost it; others put it first, and a
/// cut file has lost its last strips. BigTIFF (43) is not read.
enum TIFFStructure {
    /// Whether `bytes` begin as a TIFF does (`II*\0` or `MM\0*`).
    static func isTIFF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 4 && ((bytes[0] == 0x49 && bytes[1] == 0x49 && bytes[2] == 42 && bytes[3] == 0)
            || (bytes[0] == 0x4D && bytes[1] == 0x4D && bytes[2] == 0 && bytes[3] == 42))
    }

    /// Whether the first directory, or a strip or tile it names, lies past the end of `bytes`.
    static func endsEarly(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard isTIFF(bytes) else { return false }
        let n = bytes.count
        let little = bytes[0] == 0x49
        func value(_ at: Int, _ size: Int) -> Int? {
            guard at >= 0, at + size <= n else { return nil }
            var v = 0
            for i in 0..<size { v |= Int(bytes[at + (little ? i : size - 1 - i)]) << (8 * i) }
            return v
        }
        guard let directory = value(4, 4), let count = value(directory, 2) else { return true }
        guard directory + 2 + count * 12 <= n else { return true }
        // The entry's values: SHORT (3) or LONG (4), inline when they fit in 4 bytes.
        func values(of tag: Int) -> [Int]? {
            for e in 0..<count {
                let entry = directory + 2 + e * 12
                guard value(entry, 2) == tag, let type = value(entry + 2, 2), let number = value(entry + 4, 4),
                      type == 3 || type == 4, number <= 1 << 20 else { continue }
                let size = type == 3 ? 2 : 4
                let start = number * size <= 4 ? entry + 8 : (value(entry + 8, 4) ?? n)
                return (0..<number).map { value(start + $0 * size, size) ?? Int.max / 2 }
            }
            return nil
        }
        for (offsets, counts) in [(273, 279), (324, 325)] {
            guard let starts = values(of: offsets), let lengths = values(of: counts) else { continue }
            if zip(starts, lengths).contains(where: { $0 + $1 > n }) || starts.count > lengths.count { return true }
        }
        return false
    }
}

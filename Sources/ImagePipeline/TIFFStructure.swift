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
        func value(_ at: Int, _ size: Int) -> Int? { read(bytes, at: at, size: size, little: little) }
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

    /// The most pages a TIFF may have: about 4 s of libvips following their directories.
    static let maxPages = 100_000
    /// The most directory entries of tags libtiff does not know a TIFF may have, over all its
    /// pages: libtiff warns of each and adds it to its table of fields, about 25 µs each (2,000
    /// pages of 200 private tags took 24 s, 10,000 more than the 120 s timeout), so 20,000 are
    /// about half a second. One directory holds 4,096 entries at most.
    static let maxUnknownTags = 20_000
    /// The most entries libtiff reads in one directory; past it, it refuses the directory.
    private static let maxEntries = 4_096

    /// The tags libtiff 4.5 knows in an image's directory (`tiffFields` in its `tif_dirinfo.c`):
    /// any other costs it a warning and a new field.
    private static let knownTags: Set<Int> = [
        254, 255, 256, 257, 258, 259, 262, 263, 264, 265, 266, 269, 270, 271, 272, 273, 274, 277, 278, 279, 280, 281,
        282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 296, 297, 300, 301, 305, 306, 315, 316, 318, 319, 320, 321,
        322, 323, 324, 325, 330, 332, 333, 334, 336, 337, 338, 339, 340, 341, 400, 401, 402, 403, 404, 405, 433, 434,
        435, 529, 530, 531, 532, 559, 32995, 32996, 32997, 32998, 33300, 33301, 33302, 33303, 33304, 33305, 33306,
        33432, 33723, 34377, 34665, 34675, 34732, 34853, 34908, 34909, 34910, 34911, 37439, 50706, 50707, 50708,
        50711, 50712, 50714, 50718, 50723, 50724, 50731, 50734, 50735, 50736, 50737, 50739, 50740, 50778, 50779,
        50780, 50831, 50833, 50834
    ]

    /// Why `bytes` are refused, or `nil` for a TIFF within the limits and anything else: a TIFF
    /// whose chain of pages is longer than ``maxPages``, or whose directories hold more than
    /// ``maxUnknownTags`` entries of tags libtiff does not know.
    ///
    /// libvips' `tiffload` follows every page's directory before it draws the first, about
    /// 40 µs a page: a TIFF of 200,000 one-pixel pages (23 MB) took 7.8 s to render, and one of
    /// 250 MB (2.3 million pages) about 90 s, on a bake's worker until `--timeout` and on a
    /// runtime cache's render thread for as long as it took. The chain is followed as libtiff
    /// follows it, to a link of 0, a directory that cannot be read or holds more than 4,096
    /// entries (which libtiff refuses), or one met before (a loop, which libtiff warns of and
    /// stops at). A classic TIFF's directory is a 2-byte count of
    /// 12-byte entries, then the 4-byte offset of the next; a BigTIFF's (43) an 8-byte count
    /// of 20-byte entries, then 8 bytes.
    ///
    /// Handing libvips a copy whose first directory links to no other was tried first, and a
    /// differential fuzz found files where it changed the pixels: a first page whose data,
    /// read as libtiff estimates it when its byte counts are wrong, runs over that link.
    ///
    /// - Parameter bytes: the encoded image.
    /// - Returns: the cause to report: `tiff: more than 100000 pages`, or `tiff: more than 20000
    ///   tags libtiff does not know`.
    static func refusal(_ bytes: UnsafeRawBufferPointer) -> String? {
        let n = bytes.count
        guard n >= 16, bytes[0] == bytes[1], bytes[0] == 0x49 || bytes[0] == 0x4D else { return nil }
        let little = bytes[0] == 0x49
        func value(_ at: Int, _ size: Int) -> Int? { read(bytes, at: at, size: size, little: little) }
        let (countSize, entrySize, offsetSize): (Int, Int, Int)
        switch value(2, 2) {
        case 42: (countSize, entrySize, offsetSize) = (2, 12, 4)
        case 43: (countSize, entrySize, offsetSize) = (8, 20, 8)
        default: return nil
        }
        var at = value(offsetSize == 4 ? 4 : 8, offsetSize) ?? 0
        var seen = Set<Int>(), pages = 0, unknown = 0
        while at != 0, seen.insert(at).inserted {
            guard let count = value(at, countSize), count <= maxEntries, count <= (n - at) / entrySize,
                  let next = value(at + countSize + count * entrySize, offsetSize) else { return nil }
            pages += 1
            if pages > maxPages { return "tiff: more than \(maxPages) pages" }
            for entry in 0..<count where !knownTags.contains(value(at + countSize + entry * entrySize, 2) ?? 0) {
                unknown += 1
                if unknown > maxUnknownTags { return "tiff: more than \(maxUnknownTags) tags libtiff does not know" }
            }
            at = next
        }
        return nil
    }

    /// The unsigned `size`-byte value at `at` in the file's byte order, or `nil` where it runs
    /// outside `bytes` or past `Int.max`.
    private static func read(_ bytes: UnsafeRawBufferPointer, at: Int, size: Int, little: Bool) -> Int? {
        guard at >= 0, at <= bytes.count - size else { return nil }
        var v: UInt64 = 0
        for i in 0..<size { v |= UInt64(bytes[at + (little ? i : size - 1 - i)]) << (8 * UInt64(i)) }
        return v <= UInt64(Int.max) ? Int(v) : nil
    }
}

/// The EXIF orientation tag (0x0112) of a JPEG's APP1 "Exif" payload, read as libvips 8.14 reads
/// it through libexif: from IFD0, the tag's first value of any integer type (BYTE, SHORT, LONG
/// and their signed kinds) cut to 16 bits, as libexif turns a mistyped orientation into a SHORT;
/// 1 when that is not 1…8 (libvips takes 9 or 65535 for "no rotation", not for 8), or when the
/// payload, its TIFF header or the tag is missing or malformed.
///
/// A few dozen lines instead of libexif: the direct JPEG path needs this one tag, and every
/// offset here is checked against the payload, so a hostile payload costs at most one pass over
/// IFD0's entries.
package enum ExifOrientation {
    /// The orientation in `payload` (the APP1 marker's data, starting `Exif\0\0`).
    package static func parse(_ payload: UnsafeRawBufferPointer) -> Int {
        let tiff = 6
        guard payload.count >= tiff + 8 else { return 1 }
        let little: Bool
        switch (payload[tiff], payload[tiff + 1]) {
        case (0x49, 0x49): little = true   // "II"
        case (0x4D, 0x4D): little = false  // "MM"
        default: return 1
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= payload.count else { return nil }
            let a = Int(payload[at]), b = Int(payload[at + 1])
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ at: Int) -> Int? {
            guard let lo = u16(little ? at : at + 2), let hi = u16(little ? at + 2 : at) else { return nil }
            return lo | hi << 16
        }
        guard u16(tiff + 2) == 42, let ifd0 = u32(tiff + 4), let count = u16(tiff + ifd0) else { return 1 }
        for i in 0..<count {
            let entry = tiff + ifd0 + 2 + 12 * i
            guard let tag = u16(entry), let type = u16(entry + 2), let values = u32(entry + 4) else { return 1 }
            guard tag == 0x0112 else { continue }
            // libexif drops an entry of an unknown type, of no value, or whose values run past
            // the payload, and takes a later one of the tag; a tag of another known type (ASCII,
            // RATIONAL…) is no orientation to libvips.
            let size: Int
            switch type {
            case 1, 2, 6, 7: size = 1   // BYTE, ASCII, SBYTE, UNDEFINED
            case 3, 8: size = 2         // SHORT, SSHORT
            case 4, 9, 11: size = 4     // LONG, SLONG, FLOAT
            case 5, 10, 12: size = 8    // RATIONAL, SRATIONAL, DOUBLE
            default: continue
            }
            // Values of more than four bytes lie elsewhere, at an offset from the TIFF header.
            let (bytes, overflow) = values.multipliedReportingOverflow(by: size)
            guard values >= 1, !overflow, let start = bytes <= 4 ? entry + 8 : u32(entry + 8).map({ tiff + $0 }),
                  start >= 0, start <= payload.count - bytes else { continue }
            let first: Int
            switch type {
            case 1, 6: first = Int(payload[start])
            case 3, 8: first = u16(start)!
            case 4, 9: first = u32(start)!
            default: return 1
            }
            // A signed byte, short or long below zero comes out of libexif as 16 bits over 8.
            let value = type == 6 ? Int(UInt16(truncatingIfNeeded: Int8(truncatingIfNeeded: first))) : first & 0xFFFF
            return (1...8).contains(value) ? value : 1
        }
        return 1
    }
}

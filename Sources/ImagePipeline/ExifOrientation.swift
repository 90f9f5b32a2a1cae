/// The EXIF orientation tag (0x0112) of a JPEG's APP1 "Exif" payload, read as libvips reads it:
/// from IFD0, as a SHORT, SSHORT, LONG or SLONG with one value, clamped to 1…8; 1 when the
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
            guard values == 1 else { return 1 }
            let value: Int
            switch type {
            case 3: value = u16(entry + 8) ?? 1                         // SHORT
            case 8: value = Int(Int16(truncatingIfNeeded: u16(entry + 8) ?? 1))  // SSHORT
            case 4: value = u32(entry + 8) ?? 1                         // LONG
            case 9: value = Int(Int32(truncatingIfNeeded: u32(entry + 8) ?? 1))  // SLONG
            default: return 1
            }
            return min(max(value, 1), 8)
        }
        return 1
    }
}

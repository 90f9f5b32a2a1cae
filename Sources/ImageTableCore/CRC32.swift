import CChecksums

/// CRC-32 as zlib, PNG and Python's `zlib.crc32` compute it (ISO-HDLC, reflected `0xEDB88320`).
///
/// The format needs a checksum every other language has in its standard library. Every entry's
/// pixels are checksummed when written, so its speed is part of a bake's cost per source: on a
/// CPU with carry-less multiplication (PCLMULQDQ, x86-64 since 2010) the bulk of the bytes is
/// folded 64 at a time (`CChecksums`, about 10× the table), and 256 at a time where AVX-512 has
/// it too (VPCLMULQDQ: 3.4–4× that again on a 90 KB slot); the rest, and every other CPU, use
/// slicing-by-8, eight table lookups per 8 bytes, which stays the reference the tests hold the
/// hardware path to.
public enum CRC32 {
    static let hardwareAvailable = ccrc32_hardware_available() != 0

    /// The CRC-32 of `bytes`, continuing from `crc` (pass the previous result to chain calls).
    ///
    /// - Parameters:
    ///   - bytes: the data.
    ///   - crc: the CRC of the data before `bytes`; 0 to start.
    /// - Returns: the CRC-32 of everything so far.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, hardwareAvailable, bytes.count >= 64 else { return portable(bytes, continuing: crc) }
        let bulk = bytes.count & ~15
        let state = ccrc32_hardware_fold(~crc, base.assumingMemoryBound(to: UInt8.self), bulk)
        return portable(UnsafeRawBufferPointer(rebasing: bytes[bulk...]), continuing: ~state)
    }

    /// The table-driven CRC-32 alone: the fallback, and the reference for the hardware path.
    ///
    /// - Parameters:
    ///   - bytes: the data.
    ///   - crc: the CRC of the data before `bytes`; 0 to start.
    /// - Returns: the CRC-32 of everything so far.
    static func portable(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        guard var p = bytes.baseAddress else { return crc }
        var n = bytes.count
        let t = table
        t.withUnsafeBufferPointer { t in
            while n >= 8 {
                let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ c
                let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                c = t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (c >> 8)
                p += 1
                n -= 1
            }
        }
        return ~c
    }

    /// The CRC-32 of a byte array.
    ///
    /// - Parameter bytes: the data.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    private static let table: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(prev & 0xFF)] ^ (prev >> 8)
            }
        }
        return t
    }()
}

/// SHA-1 (FIPS 180-4), only for RFC 4122 version-5 UUIDs and the format's parameter hash.
///
/// Both are identifiers other languages must reproduce from their standard libraries, not
/// security boundaries. The digest is computed on the stack: a key lookup must not allocate.
enum SHA1 {
    /// The 20-byte digest of `message`, passed to `body` without leaving the stack.
    static func withDigest<R>(of message: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer? = nil,
                              _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        let prefixCount = prefix?.count ?? 0
        let total = prefixCount + message.count
        // Prefix, message, 0x80, zeros, and the bit length big-endian in the last 8 bytes.
        let paddedLength = (total + 9 + 63) / 64 * 64
        return try withUnsafeTemporaryAllocation(byteCount: paddedLength, alignment: 8) { padded in
            padded.initializeMemory(as: UInt8.self, repeating: 0)
            if let prefix, prefixCount > 0 { padded.baseAddress!.copyMemory(from: prefix.baseAddress!, byteCount: prefixCount) }
            if message.count > 0 { (padded.baseAddress! + prefixCount).copyMemory(from: message.baseAddress!, byteCount: message.count) }
            padded[total] = 0x80
            padded.baseAddress!.storeBytes(of: (UInt64(total) * 8).bigEndian, toByteOffset: paddedLength - 8, as: UInt64.self)
            for block in stride(from: 0, to: paddedLength, by: 64) {
                compress(&h, UnsafeRawBufferPointer(rebasing: padded[block..<block + 64]))
            }
            return try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 5) { out in
                out[0] = h.0.bigEndian; out[1] = h.1.bigEndian; out[2] = h.2.bigEndian
                out[3] = h.3.bigEndian; out[4] = h.4.bigEndian
                return try body(UnsafeRawBufferPointer(out))
            }
        }
    }

    /// The digest of `bytes` as an array (tests and the parameter hash).
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { withDigest(of: $0) { Array($0) } }
    }

    private static func compress(_ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for i in 0..<16 { w[i] = block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self).bigEndian }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = (x << 1) | (x >> 31)
            }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let f: UInt32, k: UInt32
                switch i {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let t = ((a << 5) | (a >> 27)) &+ f &+ e &+ k &+ w[i]
                e = d; d = c; c = (b << 30) | (b >> 2); b = a; a = t
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
    }
}

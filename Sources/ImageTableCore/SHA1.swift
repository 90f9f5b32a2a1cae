/// SHA-1 (FIPS 180-4), only for RFC 4122 version-5 UUIDs, source fingerprints and the format's
/// parameter hash: identifiers other languages must reproduce from their standard libraries, not
/// security boundaries.
///
/// Streaming, with the whole state on the stack, so a key lookup does not allocate.
struct SHA1 {
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var blockFill = 0
    private var total: UInt64 = 0

    /// Feeds more of the message.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress else { return }
        var n = bytes.count
        total &+= UInt64(n)
        if blockFill > 0 {
            let take = min(64 - blockFill, n)
            withUnsafeMutableBytes(of: &block) { $0.baseAddress!.advanced(by: blockFill).copyMemory(from: p, byteCount: take) }
            blockFill += take
            p += take
            n -= take
            if blockFill < 64 { return }
            let copy = block
            withUnsafeBytes(of: copy) { Self.compress(&h, $0.baseAddress!) }
            blockFill = 0
        }
        while n >= 64 {
            Self.compress(&h, p)
            p += 64
            n -= 64
        }
        if n > 0 {
            withUnsafeMutableBytes(of: &block) { $0.baseAddress!.copyMemory(from: p, byteCount: n) }
            blockFill = n
        }
    }

    /// Pads, finishes, and passes the 20-byte digest to `body` without leaving the stack.
    mutating func finalize<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let bits = total &* 8
        var pad: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0x80, 0, 0, 0, 0, 0, 0, 0, 0)
        let padLength = blockFill < 56 ? 56 - blockFill : 120 - blockFill
        withUnsafeBytes(of: &pad) { update(UnsafeRawBufferPointer(rebasing: $0[0..<padLength])) }
        var length = bits.bigEndian
        withUnsafeBytes(of: &length) { update($0) }
        var out = (h.0.bigEndian, h.1.bigEndian, h.2.bigEndian, h.3.bigEndian, h.4.bigEndian)
        return try withUnsafeBytes(of: &out) { try body($0) }
    }

    /// The digest of `message`, optionally preceded by `prefix`, passed to `body`.
    static func withDigest<R>(of message: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer? = nil,
                              _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var sha = SHA1()
        if let prefix { sha.update(prefix) }
        sha.update(message)
        return try sha.finalize(body)
    }

    /// The digest of `bytes` as an array (tests and the parameter hash).
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { withDigest(of: $0) { Array($0) } }
    }

    private static func compress(_ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawPointer) {
        var w: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &w) { ws in
            let w = ws.bindMemory(to: UInt32.self)
            for i in 0..<16 { w[i] = block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self).bigEndian }
            var (a, b, c, d, e) = h
            // A 16-word ring of the message schedule instead of 80 words.
            for i in 0..<80 {
                if i >= 16 {
                    let x = w[(i - 3) & 15] ^ w[(i - 8) & 15] ^ w[(i - 14) & 15] ^ w[i & 15]
                    w[i & 15] = (x << 1) | (x >> 31)
                }
                let f: UInt32, k: UInt32
                switch i {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let t = ((a << 5) | (a >> 27)) &+ f &+ e &+ k &+ w[i & 15]
                e = d; d = c; c = (b << 30) | (b >> 2); b = a; a = t
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
    }
}

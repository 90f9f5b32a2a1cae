import CChecksums
import Synchronization

/// SHA-1 (FIPS 180-4), only for RFC 4122 version-5 UUIDs, source fingerprints and the format's
/// parameter hash: identifiers other languages must reproduce from their standard libraries, not
/// security boundaries.
///
/// Streaming, with the whole state on the stack, so a key lookup does not allocate. Whole blocks
/// go to the CPU's SHA extensions where it has them (`CChecksums`), about four times faster, which
/// matters because every source read is fingerprinted; this portable code is the fallback and
/// the reference the tests hold the hardware path to.
struct SHA1 {
    /// Whether this CPU has the SHA extensions.
    static let hardwareAvailable = csha1_hardware_available() != 0
    /// Whether whole blocks go to the SHA extensions (when available); tests turn it off to
    /// compare. Atomic: other tests hash on other threads meanwhile.
    static var usesHardware: Bool {
        get { hardwareSwitch.load(ordering: .relaxed) }
        set { hardwareSwitch.store(newValue, ordering: .relaxed) }
    }
    private static let hardwareSwitch = Atomic<Bool>(true)

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
        if n >= 64 && Self.usesHardware && Self.hardwareAvailable {
            let blocks = n / 64
            withUnsafeMutableBytes(of: &h) { csha1_hardware_blocks($0.baseAddress!.assumingMemoryBound(to: UInt32.self),
                                                                  p.assumingMemoryBound(to: UInt8.self), blocks) }
            p += blocks * 64
            n -= blocks * 64
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

    /// One 64-byte block. The four 20-round stages are separate loops (no switch per round),
    /// the schedule is a 16-word ring on the stack, and indices are masked, not checked: about
    /// twice as fast as a loop over 80 rounds, which mattered once every source is fingerprinted.
    private static func compress(_ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawPointer) {
        var ring: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                   UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &ring) { raw in
            let w = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
            for i in 0..<16 { w[i] = block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self).bigEndian }
            @inline(__always) func schedule(_ i: Int) -> UInt32 {
                guard i >= 16 else { return w[i] }
                let x = w[(i &- 3) & 15] ^ w[(i &- 8) & 15] ^ w[(i &- 14) & 15] ^ w[i & 15]
                let v = (x << 1) | (x >> 31)
                w[i & 15] = v
                return v
            }
            var (a, b, c, d, e) = h
            @inline(__always) func round(_ f: UInt32, _ k: UInt32, _ wi: UInt32) {
                let t = ((a << 5) | (a >> 27)) &+ f &+ e &+ k &+ wi
                e = d; d = c; c = (b << 30) | (b >> 2); b = a; a = t
            }
            for i in 0..<20 { round(d ^ (b & (c ^ d)), 0x5A82_7999, schedule(i)) }
            for i in 20..<40 { round(b ^ c ^ d, 0x6ED9_EBA1, schedule(i)) }
            for i in 40..<60 { round((b & c) | (d & (b | c)), 0x8F1B_BCDC, schedule(i)) }
            for i in 60..<80 { round(b ^ c ^ d, 0xCA62_C1D6, schedule(i)) }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
    }
}

import CChecksums
import Synchronization
import Foundation
import ImageTableCore

/// SHA-256 (FIPS 180-4), for the digests an export's index lists: what `sha256sum`, build
/// systems and artifact stores compare.
///
/// Whole blocks go to the CPU's SHA extensions where it has them (`CChecksums`): an export
/// hashes every byte of each table, holes included, and a table of 100 million slots holding
/// five entries is 28 GB of them, which this portable code hashed in nearly three minutes.
/// Foundation has no SHA-256 on Linux, and swift-crypto would be a dependency for 80 lines.
public struct SHA256 {
    /// Whether this CPU has the SHA extensions.
    static let hardwareAvailable = csha256_hardware_available() != 0
    /// Whether whole blocks go to the SHA extensions (when available); tests turn it off to
    /// compare. Atomic: other tests hash on other threads meanwhile.
    static var usesHardware: Bool {
        get { hardwareSwitch.load(ordering: .relaxed) }
        set { hardwareSwitch.store(newValue, ordering: .relaxed) }
    }
    private static let hardwareSwitch = Atomic<Bool>(true)

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var h: [UInt32] = [0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19]
    private var pending: [UInt8] = []
    private var total: UInt64 = 0

    /// An empty hash.
    public init() {}

    /// Feeds more of the message.
    ///
    /// - Parameter bytes: the next bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        total &+= UInt64(bytes.count)
        var rest = bytes[...]
        if !pending.isEmpty {
            let take = min(64 - pending.count, rest.count)
            pending += rest.prefix(take)
            rest = rest.dropFirst(take)
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0) }
            pending.removeAll(keepingCapacity: true)
        }
        if rest.count >= 64 && Self.usesHardware && Self.hardwareAvailable {
            let blocks = rest.count / 64
            let start = UnsafeRawBufferPointer(rebasing: rest).baseAddress!.assumingMemoryBound(to: UInt8.self)
            h.withUnsafeMutableBufferPointer { csha256_hardware_blocks($0.baseAddress!, start, blocks) }
            rest = rest.dropFirst(blocks * 64)
        }
        while rest.count >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        pending += rest
    }

    /// Feeds more of the message.
    ///
    /// - Parameter bytes: the next bytes.
    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything fed, as 64 lowercase hex digits; the hash is spent.
    public mutating func finalize() -> String {
        let bits = total &* 8
        var tail: [UInt8] = [0x80] + [UInt8](repeating: 0, count: (119 - Int(total % 64)) % 64)
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        tail.withUnsafeBytes { update($0) }
        return h.map { word in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    /// The digest of a whole file, read in pieces of a mebibyte into one buffer.
    ///
    /// The holes of a sparse file (a table's unused index, gigabytes at large capacities) are
    /// hashed as the zeros they read as, from a buffer of zeros, without reading them.
    ///
    /// - Parameter path: the file.
    /// - Returns: 64 lowercase hex digits.
    /// - Throws: ``ImageTableCore/ImageTableError`` (`io`, `not-found`…) when the file cannot be
    ///   opened or read.
    public static func digest(ofFileAt path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImageTableError.system("open", path: path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ImageTableError.system("fstat", path: path) }
        let size = Int(st.st_size)
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
        defer { buffer.deallocate() }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        defer { zeros.deallocate() }
        var hash = SHA256()
        var offset = 0
        while offset < size {
            // Where the next data lies; a file system without SEEK_DATA says the offset itself.
            let data = lseek(fd, off_t(offset), Self.seekData)
            var hole = data < 0 ? (errno == ENXIO ? size - offset : 0) : Int(data) - offset
            while hole > 0 {
                let n = min(hole, chunk)
                hash.update(UnsafeRawBufferPointer(rebasing: zeros[0..<n]))
                hole -= n
                offset += n
            }
            guard offset < size else { break }
            let n = pread(fd, buffer.baseAddress, min(chunk, size - offset), off_t(offset))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw n < 0 ? ImageTableError.system("read", path: path) : ImageTableError(.io, "the file shrank while it was read", path: path) }
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += n
        }
        return hash.finalize()
    }

    /// `SEEK_DATA`, which Glibc's module leaves out (it is a GNU extension there).
    #if os(Linux)
    private static let seekData: Int32 = 3
    #else
    private static let seekData = SEEK_DATA
    #endif

    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { compress(block, schedule: $0) }
    }

    private mutating func compress(_ block: UnsafeRawBufferPointer, schedule w: UnsafeMutableBufferPointer<UInt32>) {
        for i in 0..<16 {
            w[i] = UInt32(block[i * 4]) << 24 | UInt32(block[i * 4 + 1]) << 16 | UInt32(block[i * 4 + 2]) << 8 | UInt32(block[i * 4 + 3])
        }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for i in 0..<64 {
            let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ Self.k[i] &+ w[i]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        for (i, v) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] &+= v }
    }

    private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
}

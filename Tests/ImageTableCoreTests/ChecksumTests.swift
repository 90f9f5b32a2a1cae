import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct ChecksumTests {
    @Test func crc32MatchesZlib() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        // Chaining gives the same result as one call, across the 8-byte fast path boundary.
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let whole = CRC32.checksum(data)
        let first = data[..<13].withUnsafeBytes { CRC32.checksum($0) }
        #expect(data[13...].withUnsafeBytes { CRC32.checksum($0, continuing: first) } == whole)
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 999] {
            #expect(CRC32.checksum(Array(data.prefix(n))) == CRC32Reference.checksum(Array(data.prefix(n))), "length \(n)")
        }
    }

    /// The folding path takes over from 64 bytes on: it must agree with the table at every length
    /// around its boundaries (64, multiples of 16, the 64-byte loop), at every alignment, chained.
    @Test func crc32HardwarePathEqualsTheTable() {
        var generator = SystemRandomNumberGenerator()
        let data = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        data.withUnsafeBytes { all in
            // From 1,024 bytes, on a CPU with AVX-512 and VPCLMULQDQ, the 512-bit loop: each of
            // its steps (256, then 64, then 16 bytes at a time, and the tail) is reached.
            for length in [64, 65, 79, 80, 127, 128, 129, 191, 192, 255, 256, 1000, 1023, 1024, 1040, 1088, 1279, 1280, 1295,
                           1343, 2048, 2063, 4096, 65_537, 69_000] {
                for offset in 0..<17 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    #expect(CRC32.checksum(slice) == CRC32.portable(slice), "length \(length) at offset \(offset)")
                    let seed = UInt32.random(in: 0...UInt32.max, using: &generator)
                    #expect(CRC32.checksum(slice, continuing: seed) == CRC32.portable(slice, continuing: seed))
                }
            }
        }
        let slot = [UInt8](repeating: 0xA5, count: 96_000)
        #expect(CRC32.checksum(slot) == CRC32Reference.checksum(slot))
    }

    @Test func sha1KnownVectors() {
        func hex(_ d: [UInt8]) -> String { d.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA1.digest(long)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    /// Fixed vectors computed with Python's `uuid.uuid5`; they pin the key → UUID mapping forever.
    @Test func keyToEntityUUIDIsStable() {
        #expect(EntityKey.uuid(for: "photos/cat.jpg").uuidString.lowercased() == "ac72ac3c-b03a-5d70-9d68-5562c0f1d381")
        #expect(EntityKey.uuid(for: "").uuidString.lowercased() == "8925fd88-e446-5595-88bb-6ef3a8d7e666")
        #expect(EntityKey.uuid(for: "ünïcødé/😀.png").uuidString.lowercased() == "c1e9a8b0-f342-5cdf-bc28-bef1e9b27d48")
    }
}

/// Bit-at-a-time CRC-32, the obviously-correct reference for the sliced version.
enum CRC32Reference {
    static func checksum(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }
}

/// Source fingerprints, pinned to values computed with Python's hashlib from the spec's rule.
struct SourceFingerprintTests {
    @Test func fingerprintsMatchTheSpecRule() throws {
        let small = Array("hello image".utf8)
        #expect(small.withUnsafeBytes { SourceFingerprint.uuid(of: $0) }.uuidString.lowercased() == "7fac457a-682f-50d7-9889-2bd6d967b340")
        // 1.28 MB: crosses the reader's 1 MiB chunks and many SHA-1 blocks at odd offsets.
        let big = (0..<5000).flatMap { _ in (0..<256).map(UInt8.init) }
        let dir = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: dir.file("big"), contents: Data(big))
        let (uuid, bytes) = try SourceFingerprint.uuid(contentsOf: dir.file("big"))
        #expect(bytes == big.count && uuid.uuidString.lowercased() == "186abf94-eea6-5d98-a0f1-a91b374a4dbf")
        #expect(big.withUnsafeBytes { SourceFingerprint.uuid(of: $0) } == uuid)
        let error = #expect(throws: ImageTableError.self) { try SourceFingerprint.uuid(contentsOf: dir.file("missing")) }
        #expect(error?.path == dir.file("missing"))
    }
}

/// The SHA extensions' path gives the portable code's digests, for every length around the block
/// size and for random messages, split into updates at random places.
@Suite(.serialized) struct SHA1HardwareTests {
    static func digest(_ bytes: [UInt8], hardware: Bool, splits: [Int] = []) -> [UInt8] {
        let saved = SHA1.usesHardware
        SHA1.usesHardware = hardware
        defer { SHA1.usesHardware = saved }
        var sha = SHA1()
        forEachPiece(of: bytes, cutAt: splits) { sha.update($0) }
        return sha.finalize { Array($0) }
    }

    @Test(.enabled(if: SHA1.hardwareAvailable, "this CPU has no SHA extensions")) func hardwareAndPortableAgree() {
        forEachRandomMessage { message, splits in
            let portable = Self.digest(message, hardware: false)
            #expect(Self.digest(message, hardware: true) == portable, "length \(message.count)")
            #expect(Self.digest(message, hardware: true, splits: splits) == portable, "length \(message.count), split at \(splits)")
        }
        #expect(Self.digest(Array("abc".utf8), hardware: true).map { String(format: "%02x", $0) }.joined()
                == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }
}

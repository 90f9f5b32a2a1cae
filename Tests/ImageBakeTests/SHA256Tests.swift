import Foundation
@testable import ImageBake
import TestSupport
import Testing

/// The SHA-256 an export's index lists is FIPS 180-4's: the standard's test vectors, and the
/// same digest however the message is split, on the SHA extensions and in the portable code.
@Suite(.serialized) struct SHA256Tests {
    private func digest(_ text: String) -> String {
        var hash = SHA256()
        hash.update(Array(text.utf8))
        return hash.finalize()
    }

    @Test func standardVectors() {
        #expect(digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(digest(String(repeating: "a", count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(arguments: [1, 3, 55, 56, 63, 64, 65, 200])
    func splittingTheMessageChangesNothing(pieceSize: Int) {
        let message = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        var whole = SHA256()
        whole.update(message)
        var pieces = SHA256()
        for start in stride(from: 0, to: message.count, by: pieceSize) {
            pieces.update(Array(message[start..<min(start + pieceSize, message.count)]))
        }
        #expect(pieces.finalize() == whole.finalize())
    }

    @Test func aFileDigestIsWhatSha256sumPrints() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("f", (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
        let sum = try run("/usr/bin/env", ["sha256sum", path])
        #expect(sum.status == 0)
        #expect(try SHA256.digest(ofFileAt: path) == String(sum.stdout.prefix(64)))
    }

    /// Holes are hashed as the zeros they read as, without reading them: data, a hole, data
    /// that does not fill its last block, and a hole to the end of the file.
    @Test func aSparseFileDigestIsWhatSha256sumPrints() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sparse")
        let fd = open(path, O_RDWR | O_CREAT, 0o644)
        defer { close(fd) }
        let data = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        #expect(data.withUnsafeBytes { pwrite(fd, $0.baseAddress, 100, 0) } == 100)
        #expect(data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 5_000_000 + 7) } == data.count)
        #expect(ftruncate(fd, 9_000_000) == 0)
        let sum = try run("/usr/bin/env", ["sha256sum", path])
        #expect(sum.status == 0)
        #expect(try SHA256.digest(ofFileAt: path) == String(sum.stdout.prefix(64)))
    }

    static func digest(_ bytes: [UInt8], hardware: Bool, splits: [Int] = []) -> String {
        let saved = SHA256.usesHardware
        SHA256.usesHardware = hardware
        defer { SHA256.usesHardware = saved }
        var hash = SHA256()
        forEachPiece(of: bytes, cutAt: splits) { hash.update($0) }
        return hash.finalize()
    }

    @Test(.enabled(if: SHA256.hardwareAvailable, "this CPU has no SHA extensions")) func hardwareAndPortableAgree() {
        forEachRandomMessage { message, splits in
            let portable = Self.digest(message, hardware: false)
            #expect(Self.digest(message, hardware: true) == portable, "length \(message.count)")
            #expect(Self.digest(message, hardware: true, splits: splits) == portable, "length \(message.count), split at \(splits)")
        }
        #expect(Self.digest(Array("abc".utf8), hardware: true) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.digest([UInt8](repeating: 0x61, count: 1_000_000), hardware: true)
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

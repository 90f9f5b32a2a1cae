import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The source UUID the baker records for a source file: a version-5 UUID of the file's bytes in
/// ``SourceFingerprint/namespace`` (`docs/FORMAT.md`, "Keys and entity UUIDs").
///
/// Equal bytes give equal UUIDs wherever the file lives, so an unchanged source is recognised
/// without decoding it, and a changed one is re-baked. Any language can compute it:
/// `SHA-1(namespace bytes + file bytes)`, first 16 bytes, version and variant bits set.
public enum SourceFingerprint {
    /// `870839dd-0f0a-59b0-b79c-e16132a3da73`, itself `uuid5(NAMESPACE_URL, "urn:imagetables:source-content")`.
    public static let namespace = UUID(uuidString: "870839DD-0F0A-59B0-B79C-E16132A3DA73")!

    /// The fingerprint of bytes in memory.
    ///
    /// - Parameter bytes: the source's content.
    public static func uuid(of bytes: UnsafeRawBufferPointer) -> UUID {
        var sha = start()
        sha.update(bytes)
        return sha.finalize { EntityKey.uuid(fromSHA1: $0) }
    }

    /// The fingerprint of a file's content, read in 1 MiB chunks.
    ///
    /// - Parameter path: the source file.
    /// - Returns: the fingerprint and the number of bytes read.
    /// - Throws: ``ImageTableError`` `io` naming the file when it cannot be opened or read.
    public static func uuid(contentsOf path: String) throws(ImageTableError) -> (uuid: UUID, bytes: Int) {
        let fd = Posix.retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw Posix.error("open", path: path) }
        defer { close(fd) }
        var sha = start()
        var total = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { chunk.deallocate() }
        while true {
            let n: Int
            switch SystemIO.read(fd, into: chunk) {
            case .success(let count): n = count
            case .failure(let error): throw Posix.error("read", path: path, errno: error.errno)
            }
            sha.update(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            total += n
            if n < chunk.count { break }
        }
        return (sha.finalize { EntityKey.uuid(fromSHA1: $0) }, total)
    }

    /// The UUID a fingerprint's text names: `8-4-4-4-12` hexadecimal digits, either case, as
    /// `uuidString` writes it, and nothing else (no space, no short group, which Foundation's
    /// `sscanf` lets through). A bake reads one from every worker's reply, where
    /// `UUID(uuidString:)` cost 0.4 % of a bake of small sources.
    ///
    /// - Parameter text: the UUID's text.
    /// - Returns: the UUID, or `nil` when `text` is not one.
    public static func uuid(parsing text: String) -> UUID? {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = text.utf8.withContiguousStorageIfAvailable { chars -> Bool in
            guard chars.count == 36 else { return false }
            return withUnsafeMutableBytes(of: &bytes) { out -> Bool in
                var i = 0, o = 0
                while i < 36 {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        guard chars[i] == UInt8(ascii: "-") else { return false }
                        i += 1
                        continue
                    }
                    guard let high = hexValue(chars[i]), let low = hexValue(chars[i + 1]) else { return false }
                    out[o] = high << 4 | low
                    o += 1
                    i += 2
                }
                return true
            }
        }
        guard let parsed else {
            // Not stored as UTF-8 (a bridged string): read as a copy that is, as strictly.
            var copy = text
            copy.makeContiguousUTF8()
            return uuid(parsing: copy)
        }
        return parsed ? UUID(uuid: bytes) : nil
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func start() -> SHA1 {
        var sha = SHA1()
        withUnsafeBytes(of: namespace.uuid) { sha.update($0) }
        return sha
    }
}

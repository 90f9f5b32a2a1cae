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

    static func start() -> SHA1 {
        var sha = SHA1()
        withUnsafeBytes(of: namespace.uuid) { sha.update($0) }
        return sha
    }
}

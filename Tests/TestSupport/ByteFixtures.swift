import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Inverts every bit of the byte at `offset` of `path`: damage a checksum must catch.
///
/// - Throws: `POSIXError` when the file cannot be opened, read or written there.
public func invertByte(in path: String, at offset: Int) throws {
    let fd = open(path, O_RDWR)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var byte: UInt8 = 0
    guard pread(fd, &byte, 1, off_t(offset)) == 1 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    byte ^= 0xFF
    guard pwrite(fd, &byte, 1, off_t(offset)) == 1 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}

/// Passes `bytes` to `body` in pieces cut at `splits` (in any order; cuts outside the bytes or
/// before an earlier one are ignored): how the hash tests feed a message in several updates.
public func forEachPiece(of bytes: [UInt8], cutAt splits: [Int], _ body: (UnsafeRawBufferPointer) -> Void) {
    var start = 0
    bytes.withUnsafeBytes { raw in
        for cut in splits.sorted() + [bytes.count] where cut >= start && cut <= bytes.count {
            body(UnsafeRawBufferPointer(rebasing: raw[start..<cut]))
            start = cut
        }
    }
}

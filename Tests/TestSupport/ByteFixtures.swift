import Foundation
import ImageTableCore
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

/// Calls `body` with random messages of every length up to 200 bytes and a few longer ones
/// (past a block, a page, a mebibyte), each with three random cuts for ``forEachPiece(of:cutAt:_:)``:
/// how the hash tests hold a hardware path to the portable one.
public func forEachRandomMessage(_ body: (_ message: [UInt8], _ splits: [Int]) -> Void) {
    var generator = SystemRandomNumberGenerator()
    for length in Array(0...200) + [1_000, 4_096, 65_536, 1_000_003] {
        let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let splits = (0..<3).map { _ in Int.random(in: 0...max(length, 1), using: &generator) }
        body(message, splits)
    }
}

/// Rewrites index record `offset` of the table at `path` as `edit` changes its 256 bytes, then
/// makes its checksum (bytes 20..<24, the CRC-32 of 24..<256) hold again: a forged record that
/// only a check beyond the checksum can tell.
///
/// - Parameters:
///   - path: the table.
///   - offset: the record's byte offset (`TableLayout.recordOffset(_:)`).
///   - edit: changes the record's bytes.
public func forgeRecord(in path: String, at offset: Int, _ edit: (inout [UInt8]) -> Void) throws {
    let fd = open(path, O_RDWR)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var record = [UInt8](repeating: 0, count: 256)
    guard pread(fd, &record, 256, off_t(offset)) == 256 else { throw POSIXError(.EIO) }
    edit(&record)
    let crc = record.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[24..<256])) }
    withUnsafeBytes(of: crc.littleEndian) { record.replaceSubrange(20..<24, with: $0) }
    guard pwrite(fd, record, 256, off_t(offset)) == 256 else { throw POSIXError(.EIO) }
}

import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a source file whole, with errors that say why it could not be read.
///
/// Reading into memory (rather than letting libvips open or map the file) keeps a file that is
/// truncated or replaced while it is rendered from crashing the process through a memory map,
/// gives every failure to open or read a precise reason, and makes files and in-memory bytes
/// take one path. The copy costs well under a millisecond for a photo.
enum SourceReader {
    static func read(_ path: String, maxBytes: Int) throws(ImageTableError) -> [UInt8] {
        func unreadable(_ why: String) -> ImageTableError { ImageTableError(.unreadable, why, path: path) }
        func errnoText() -> String { String(cString: strerror(errno)) }
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable("cannot open: \(errnoText())") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw unreadable("cannot stat: \(errnoText())") }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw unreadable("is a directory")
        default: throw unreadable("is not a regular file")
        }
        let size = Int(st.st_size)
        guard size > 0 else { throw ImageTableError(.empty, "the file is empty (0 bytes)", path: path) }
        guard size <= maxBytes else {
            throw ImageTableError(.sourceTooLarge, "\(size) bytes is over the limit of \(maxBytes)", path: path)
        }
        var failure: ImageTableError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            // Fewer bytes than the size: the file shrank meanwhile; render what is there.
            switch SystemIO.read(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
            case .success(let n): count = n
            case .failure(let error):
                count = 0
                failure = unreadable("read failed: \(error.reason)")
            }
        }
        if let failure { throw failure }
        guard !bytes.isEmpty else { throw ImageTableError(.empty, "the file is empty (0 bytes)", path: path) }
        return bytes
    }
}

/// Tells truncation from other corruption by the file's structure, for decoders whose message
/// does not say ("libpng read error"). Only consulted after a decode has failed.
enum Truncation {
    static func refine(_ error: ImageTableError, bytes: UnsafeRawBufferPointer) -> ImageTableError {
        guard error.code == .decodeFailed, looksTruncated(bytes) else { return error }
        return ImageTableError(.truncated, "the image data ends early", path: error.path, cause: error.cause)
    }

    static func looksTruncated(_ b: UnsafeRawBufferPointer) -> Bool {
        let n = b.count
        func starts(_ prefix: [UInt8]) -> Bool { n >= prefix.count && zip(prefix, b).allSatisfy { $0 == $1 } }
        if starts([0xFF, 0xD8, 0xFF]) {
            // JPEG ends with the EOI marker.
            return !(n >= 4 && b[n - 2] == 0xFF && b[n - 1] == 0xD9)
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            // PNG ends with the IEND chunk: type then CRC.
            return !(n >= 20 && Array(b[(n - 8)..<(n - 4)]) == Array("IEND".utf8))
        }
        if starts(Array("GIF8".utf8)) {
            return b[n - 1] != 0x3B
        }
        if starts(Array("RIFF".utf8)), n >= 12, Array(b[8..<12]) == Array("WEBP".utf8) {
            let declared = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
            return n < declared + 8
        }
        return false
    }
}

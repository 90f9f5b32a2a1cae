import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells truncation from other corruption by the file's structure, for decoders whose message
/// does not say ("libpng read error"). Only consulted after a decode has failed.
enum Truncation {
    static func refine(_ error: ImageTableError, bytes: UnsafeRawBufferPointer) -> ImageTableError {
        // A TIFF whose first directory libtiff cannot read is no TIFF to libvips, which then
        // names the last loader it tried: "not an image in a format this pipeline decodes
        // (magickload_buffer: operation is blocked)" of a photo cut short.
        // Only that fall-through: a TIFF refused for what it holds (five bands) is said as such.
        if error.code == .unsupportedFormat, TIFFStructure.isTIFF(bytes), error.cause?.contains("operation is blocked") == true {
            if TIFFStructure.endsEarly(bytes) {
                return ImageTableError(.truncated, "the image data ends early", path: error.path,
                                       cause: "the TIFF's first directory or its image data lie past the end of the file")
            }
            return ImageTableError(.decodeFailed, "could not decode", path: error.path, cause: "libtiff cannot read the TIFF's first directory")
        }
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
        if TIFFStructure.isTIFF(b) {
            return TIFFStructure.endsEarly(b)
        }
        if starts(Array("RIFF".utf8)), n >= 12, Array(b[8..<12]) == Array("WEBP".utf8) {
            let declared = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
            return n < declared + 8
        }
        return false
    }
}

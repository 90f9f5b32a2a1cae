#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the scans of a JPEG by walking its markers, without decoding it.
///
/// libjpeg goes over every block of the image for each scan of a progressive JPEG, so a small
/// file of thousands of empty scans costs minutes of CPU. The direct path stops such a file with
/// libjpeg's progress monitor, but JPEGs libvips decodes (CMYK, grey with a profile, damaged)
/// never reach it: this walk bounds them all before either decoder starts
/// (``JPEGDecoder/maxScans``, libjpeg-turbo's `-maxscans`).
///
/// The walk follows libjpeg's reading: segments by their lengths, entropy-coded data up to the
/// next marker that is not a stuffed byte (`FF 00`) or a restart (`FF D0`…`FF D7`), stray bytes
/// between markers passed over, and nothing after the end of the image (`FF D9`). An embedded
/// thumbnail's scans lie inside its APP1 segment and are not counted.
package enum JPEGScans {
    /// The number of start-of-scan markers in `bytes`, counting no further than `limit + 1`.
    ///
    /// - Parameters:
    ///   - bytes: the whole file, starting with its start-of-image marker.
    ///   - limit: the count past which the caller refuses the file; the walk stops there.
    /// - Returns: the scans found, at most `limit + 1`; those of a file cut short included.
    package static func count(in bytes: UnsafeRawBufferPointer, upTo limit: Int) -> Int {
        guard bytes.count > 4, let base = bytes.baseAddress else { return 0 }
        let data = base.assumingMemoryBound(to: UInt8.self)
        let end = bytes.count
        var scans = 0
        var i = 2  // after the start-of-image marker
        while scans <= limit, let marker = nextMarker(data, from: i, end: end) {
            let code = data[marker + 1]
            i = marker + 2
            switch code {
            case 0xD9:
                return scans
            case 0x01, 0xD0...0xD7:
                continue  // markers without a segment
            default:
                guard i + 2 <= end else { return scans }
                let length = Int(data[i]) << 8 | Int(data[i + 1])
                guard length >= 2 else { return scans }  // libjpeg fails on it
                i += length
                if code == 0xDA {
                    scans += 1
                    i = endOfEntropyData(data, from: i, end: end)
                }
            }
        }
        return scans
    }

    /// The position of the next marker's `FF` at or after `start` (fill bytes `FF FF …` passed
    /// over), or `nil` when none is left.
    private static func nextMarker(_ data: UnsafePointer<UInt8>, from start: Int, end: Int) -> Int? {
        var i = start
        while i < end - 1 {
            guard let found = memchr(data + i, 0xFF, end - 1 - i) else { return nil }
            i = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - data
            var next = i + 1
            while next < end, data[next] == 0xFF { next += 1 }
            guard next < end else { return nil }
            if data[next] != 0x00 { return next - 1 }
            i = next + 1
        }
        return nil
    }

    /// Where the entropy-coded data that starts at `start` ends: the next marker that is neither
    /// a stuffed `FF 00` nor a restart, or `end`.
    private static func endOfEntropyData(_ data: UnsafePointer<UInt8>, from start: Int, end: Int) -> Int {
        var i = start
        while let marker = nextMarker(data, from: i, end: end) {
            guard (0xD0...0xD7).contains(data[marker + 1]) else { return marker }
            i = marker + 2
        }
        return end
    }
}

/// How many frames and chunks a WebP holds, counted from its bytes without libwebp: enough to
/// refuse one whose structure, not its pixels, would cost libvips minutes and gigabytes.
///
/// libvips 8.14's `webpload` looks at every frame of an animation before it draws the first, in
/// time quadratic in their number (libwebp's demuxer walks its list of frames to find each):
/// 4,000 frames of 1×1 took 0.28 s, 16,000 took 2.5 s, and 100,000 (4 MB) minutes, on a bake's
/// worker until `--timeout` stopped it and on a runtime cache's render thread for as long as it
/// took. And libwebp lists every chunk of a file, about 70 bytes each and more for metadata
/// chunks: 8 million empty chunks in 64 MB took 5.6 s and 600 MB, 250 MB of `EXIF` chunks 17 s
/// and 3.6 GB. So a WebP of more than ``maxFrames`` frames or ``maxChunks`` chunks is refused
/// (`decode-failed`), as a JPEG of more than a thousand scans is, before libvips sees it.
///
/// Handing libvips a copy without the later frames and unknown chunks was tried first, and a
/// differential fuzz of it against libvips found it changed what libvips draws: libvips
/// decides the image's alpha and whether to shrink on load from every frame's size and alpha,
/// and libwebp skips frames that hold no image. A limit changes nothing below it.
///
/// A WebP is `RIFF`, a little-endian size, `WEBP`, then chunks: a FourCC, a little-endian size,
/// the payload, and a pad byte to an even length. Chunks are counted up to the RIFF size or
/// the end of the file, whichever comes first, and to the first that runs past it.
enum WebPStructure {
    /// The most frames (`ANMF` chunks) a WebP may have: about a second of libvips' listing.
    static let maxFrames = 10_000
    /// The most chunks a WebP may have: an animation of ``maxFrames`` frames, and room for more
    /// metadata than any writer adds; libwebp lists them in about 70 ms.
    static let maxChunks = 100_000

    /// Whether `bytes` begin as a WebP does (`RIFF` … `WEBP`).
    static func isWebP(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 12 && bytes[0] == 0x52 && bytes[1] == 0x49 && bytes[2] == 0x46 && bytes[3] == 0x46
            && bytes[8] == 0x57 && bytes[9] == 0x45 && bytes[10] == 0x42 && bytes[11] == 0x50
    }

    /// `ANMF`, an animation frame's FourCC, as its four bytes read little-endian.
    private static let frameTag: UInt32 = 0x464D_4E41
    /// `VP8 ` and `VP8L`, a simple file's image, likewise.
    private static let simpleLossy: UInt32 = 0x2038_5056, simpleLossless: UInt32 = 0x4C38_5056

    /// Why `bytes` are refused, or `nil` for a WebP within the limits and anything else.
    ///
    /// - Parameter bytes: the encoded image.
    /// - Returns: the cause to report: `webp: more than 10000 frames`, or `… chunks`.
    static func refusal(_ bytes: UnsafeRawBufferPointer) -> String? {
        // A simple file (a `VP8 ` or `VP8L` image first) is its image: libwebp lists nothing after it.
        guard isWebP(bytes), bytes.count >= 16, ![simpleLossy, simpleLossless].contains(word(bytes, at: 12)) else { return nil }
        // In 64 bits whatever `Int` is: sizes are 32-bit and sums of them pass 2³¹.
        let end = min(8 + UInt64(word(bytes, at: 4)), UInt64(bytes.count))
        var at: UInt64 = 12
        var frames = 0, chunks = 0
        while at + 8 <= end {
            if word(bytes, at: Int(at)) == frameTag {
                frames += 1
                if frames > maxFrames { return "webp: more than \(maxFrames) frames" }
            }
            chunks += 1
            if chunks > maxChunks { return "webp: more than \(maxChunks) chunks" }
            let size = UInt64(word(bytes, at: Int(at) + 4))
            at += 8 + size + (size & 1)
        }
        return nil
    }

    /// The little-endian 32-bit word at `at`.
    private static func word(_ bytes: UnsafeRawBufferPointer, at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}

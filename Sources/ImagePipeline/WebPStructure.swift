/// An animated WebP cut down to its first frame, read from its bytes without libwebp: the one
/// frame a render draws, without the time libvips 8.14 takes to list the rest.
///
/// libvips' `webpload` looks at every frame of an animation before it draws the first, in time
/// quadratic in their number: 4,000 frames of 1×1 took 0.28 s, 16,000 took 2.5 s, and 100,000
/// (4 MB) minutes, on a worker until `--timeout` stopped it and on a runtime cache's render
/// thread for as long as it took. A render draws the first frame alone, composed on the canvas as
/// libvips composes it, which no later frame changes; so an animation is handed to libvips as a
/// copy holding every chunk but the later frames (the canvas and its flags, `ANIM`, the first
/// `ANMF`, profile and metadata), and libvips draws exactly what it drew from the whole file.
/// Likewise libwebp lists every chunk, known or not, so a file of very many is handed over
/// without those no decoder reads.
///
/// A WebP is `RIFF`, a little-endian size (of what follows it), `WEBP`, then chunks: a FourCC,
/// a little-endian size, the payload, and a pad byte to an even length. Only a file whose chunks
/// all lie inside its RIFF size and whose size lies inside the file is cut: anything else is left
/// to libvips whole, which reports its damage in its own words as before.
enum WebPStructure {
    /// Whether `bytes` begin as a WebP does (`RIFF` … `WEBP`).
    static func isWebP(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 12 && bytes[0] == 0x52 && bytes[1] == 0x49 && bytes[2] == 0x46 && bytes[3] == 0x46
            && bytes[8] == 0x57 && bytes[9] == 0x45 && bytes[10] == 0x42 && bytes[11] == 0x50
    }

    /// `ANMF`, an animation frame's FourCC, as its four bytes read little-endian.
    private static let frameTag: UInt32 = 0x464D_4E41

    /// Calls `body` with each chunk of a WebP, in order: its FourCC (read little-endian) and its
    /// bytes, header and pad included. Returns `false` when the structure does not add up (a
    /// RIFF size past the end of the file, a chunk running past the RIFF size). Nothing is
    /// gathered on the way: a file of 256 MB may hold 32 million empty chunks.
    private static func forEachChunk(_ bytes: UnsafeRawBufferPointer, _ body: (UInt32, Range<Int>) -> Void) -> Bool {
        guard isWebP(bytes) else { return false }
        let end = 8 + Int(word(bytes, at: 4))
        guard end <= bytes.count, end >= 12 else { return false }
        var at = 12
        while at < end {
            guard at + 8 <= end else { return false }
            let size = Int(word(bytes, at: at + 4))
            let next = at + 8 + size + (size & 1)
            // A last chunk of odd size may go without its pad, which libwebp allows.
            guard next <= end || (next == end + 1 && size & 1 == 1) else { return false }
            body(word(bytes, at: at), at..<min(next, end))
            at = next
        }
        return true
    }

    /// The chunks a decoder reads (`VP8X`, `VP8 `, `VP8L`, `ALPH`, `ANIM`, `ANMF`, `ICCP`,
    /// `EXIF`, `XMP `), as their FourCCs read little-endian; libwebp passes over any other.
    private static let known: Set<UInt32> = Set(["VP8X", "VP8 ", "VP8L", "ALPH", "ANIM", "ANMF", "ICCP", "EXIF", "XMP "].map { tag in
        tag.utf8.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    })

    /// How many chunks a WebP may have before a render drops those no decoder reads: a still
    /// image has two or three, and libwebp keeps about 70 bytes for each one it lists (8
    /// million empty ones, 64 MB, took libvips 5.6 s and 600 MB).
    static let chunksKeptWhole = 64

    /// A copy of `bytes` with only what a render of its first frame needs, or `nil` when there
    /// is nothing to drop (not a WebP, one frame or none and few chunks, or a structure that
    /// does not add up, which libvips reports as it always has). Dropped: an animation's frames
    /// after its first, and chunks no decoder reads when there are more than ``chunksKeptWhole``.
    ///
    /// - Parameter bytes: the encoded image.
    /// - Returns: the WebP with one `ANMF` chunk at most, its RIFF size made to match.
    static func firstFrameOnly(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        // Checked whole first: a file that does not add up is not cut, wherever its fault lies.
        var frames = 0, chunks = 0
        guard forEachChunk(bytes, { tag, _ in
            if tag == frameTag { frames += 1 }
            chunks += 1
        }), frames >= 2 || chunks > chunksKeptWhole else { return nil }
        let dropsUnknown = chunks > chunksKeptWhole
        var out: [UInt8] = []
        // Runs of kept chunks are copied whole. Whatever is dropped, each kept chunk is padded
        // as it was, and the last one kept, the file's last if unpadded, is still the last.
        var run = 0..<12, seen = 0
        _ = forEachChunk(bytes) { tag, range in
            if tag == frameTag { seen += 1 }
            if (tag == frameTag && seen > 1) || (dropsUnknown && !known.contains(tag)) {
                out += bytes[run]
                run = range.upperBound..<range.upperBound
            } else {
                run = run.lowerBound..<range.upperBound
            }
        }
        out += bytes[run]
        withUnsafeBytes(of: UInt32(out.count - 8).littleEndian) { out.replaceSubrange(4..<8, with: $0) }
        return out
    }

    /// The little-endian 32-bit word at `at`.
    private static func word(_ bytes: UnsafeRawBufferPointer, at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}

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

    /// A chunk's place in the file: its FourCC (little-endian) and its bytes, header and pad
    /// included.
    private struct Chunk {
        let tag: UInt32
        let range: Range<Int>
    }

    /// The chunks of a well-formed WebP, in order, or `nil` when its structure does not add up:
    /// a RIFF size past the end of the file, or a chunk running past the RIFF size.
    private static func chunks(_ bytes: UnsafeRawBufferPointer) -> [Chunk]? {
        guard isWebP(bytes) else { return nil }
        let end = 8 + Int(word(bytes, at: 4))
        guard end <= bytes.count, end >= 12 else { return nil }
        var chunks: [Chunk] = []
        var at = 12
        while at < end {
            guard at + 8 <= end else { return nil }
            let size = Int(word(bytes, at: at + 4))
            let next = at + 8 + size + (size & 1)
            // A last chunk of odd size may go without its pad, which libwebp allows.
            guard next <= end || (next == end + 1 && size & 1 == 1) else { return nil }
            chunks.append(Chunk(tag: word(bytes, at: at), range: at..<min(next, end)))
            at = next
        }
        return chunks
    }

    /// A copy of `bytes` without the frames of an animation after its first, or `nil` when there
    /// is nothing to cut (not a WebP, one frame or none, or a structure that does not add up,
    /// which libvips reports as it always has).
    ///
    /// - Parameter bytes: the encoded image.
    /// - Returns: the WebP with one `ANMF` chunk, its RIFF size made to match.
    static func firstFrameOnly(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let chunks = chunks(bytes), chunks.lazy.filter({ $0.tag == frameTag }).prefix(2).count == 2 else { return nil }
        var kept: [Chunk] = []
        var frames = 0
        for chunk in chunks {
            if chunk.tag == frameTag {
                frames += 1
                if frames > 1 { continue }
            }
            kept.append(chunk)
        }
        // An unpadded last chunk is padded when it no longer comes last.
        let length = kept.reduce(4) { $0 + $1.range.count + ($1.range.count & 1) }
        var out: [UInt8] = []
        out.reserveCapacity(8 + length)
        out += bytes[0..<4]
        out += withUnsafeBytes(of: UInt32(length).littleEndian) { Array($0) }
        out += bytes[8..<12]
        for chunk in kept {
            out += bytes[chunk.range]
            if chunk.range.count & 1 == 1 { out.append(0) }
        }
        return out
    }

    /// The little-endian 32-bit word at `at`.
    private static func word(_ bytes: UnsafeRawBufferPointer, at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}

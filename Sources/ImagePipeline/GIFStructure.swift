/// How many of its pixels a GIF's first frame holds, counted from its LZW codes without drawing
/// them: enough to tell a frame whose data stops early, which libnsgif draws without a word.
///
/// libvips (libnsgif) warns of a GIF cut short inside its data blocks, and the bake refuses it
/// as `truncated`; but a first frame whose data blocks end properly before its last pixel (its
/// blocks cut and the file closed again, or an end-of-information code too soon) is drawn with
/// the missing rows left transparent or in the background colour, at every `failOn` level.
/// Counting the codes costs a small part of the decode (no pixels, no colour table).
///
/// A GIF is a header, a logical screen descriptor (and its colour table), then extensions
/// (`0x21`) and frames (`0x2C`: a descriptor, an optional local colour table, the LZW minimum
/// code size and data sub-blocks, each a length byte then that many bytes, ending at a zero
/// length), and a trailer (`0x3B`).
enum GIFStructure {
    /// Whether `bytes` begin as a GIF does (`GIF87a`, `GIF89a`).
    static func isGIF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 6 && bytes[0] == 0x47 && bytes[1] == 0x49 && bytes[2] == 0x46 && bytes[3] == 0x38
            && (bytes[4] == 0x37 || bytes[4] == 0x39) && bytes[5] == 0x61
    }

    /// The first frame's pixels and how many of them its codes give.
    struct Count: Equatable {
        /// The frame's width × height.
        var pixels: Int
        /// The pixels its LZW codes decode to before they end, at most `pixels`.
        var decoded: Int
        /// Whether the codes stopped at one no decoder can read (a code not yet in the table),
        /// which libnsgif refuses itself.
        var badCode: Bool
    }

    /// Counts the first frame of `bytes`, or returns `nil` when there is no frame to count: not a
    /// GIF, a structure cut before the frame's data, or an LZW minimum code size out of range
    /// (libnsgif reports those itself).
    static func firstFrame(_ bytes: UnsafeRawBufferPointer) -> Count? {
        guard isGIF(bytes), bytes.count >= 13 else { return nil }
        let n = bytes.count
        var at = 13
        if bytes[10] & 0x80 != 0 { at += 3 << (Int(bytes[10] & 7) + 1) }
        // Extensions up to the first image descriptor.
        while at < n, bytes[at] == 0x21 {
            at += 2
            while at < n, bytes[at] != 0 { at += Int(bytes[at]) + 1 }
            at += 1
        }
        guard at + 11 <= n, bytes[at] == 0x2C else { return nil }
        let width = Int(bytes[at + 5]) | Int(bytes[at + 6]) << 8
        let height = Int(bytes[at + 7]) | Int(bytes[at + 8]) << 8
        let flags = bytes[at + 9]
        at += 10
        if flags & 0x80 != 0 { at += 3 << (Int(flags & 7) + 1) }
        guard at < n else { return nil }
        let minimum = Int(bytes[at])
        guard (2...11).contains(minimum) || minimum == 1 else { return nil }
        at += 1
        var codes = LZWCodes(bytes, at: at, minimum: minimum)
        let pixels = width * height
        let (decoded, bad) = codes.count(upTo: pixels)
        return Count(pixels: pixels, decoded: decoded, badCode: bad)
    }
}

/// An LZW code stream over a GIF frame's data sub-blocks, read least significant bit first.
private struct LZWCodes {
    let bytes: UnsafeRawBufferPointer
    var at: Int
    /// Bytes left in the current sub-block.
    var left = 0
    var ended = false
    var bits: UInt32 = 0
    var held = 0
    let minimum: Int

    init(_ bytes: UnsafeRawBufferPointer, at: Int, minimum: Int) {
        self.bytes = bytes
        self.at = at
        self.minimum = minimum
    }

    /// The next `size`-bit code, or `nil` where the sub-blocks (or the file) end.
    mutating func next(_ size: Int) -> Int? {
        while held < size {
            if left == 0 {
                guard !ended, at < bytes.count, bytes[at] != 0 else {
                    ended = true
                    return nil
                }
                left = Int(bytes[at])
                at += 1
            }
            guard at < bytes.count else {
                ended = true
                return nil
            }
            bits |= UInt32(bytes[at]) << held
            held += 8
            at += 1
            left -= 1
        }
        let code = Int(bits & ((1 << size) - 1))
        bits >>= UInt32(size)
        held -= size
        return code
    }

    /// The pixels the codes decode to, up to `limit`, and whether they stopped at a bad code.
    mutating func count(upTo limit: Int) -> (Int, Bool) {
        let clear = 1 << minimum, end = clear + 1
        // Each table entry's string length; literals are one pixel.
        var lengths = [Int32](repeating: 1, count: 4096)
        var next = clear + 2, size = minimum + 1, previous = -1, decoded = 0
        while decoded < limit, let code = self.next(size) {
            if code == clear {
                next = clear + 2
                size = minimum + 1
                previous = -1
                continue
            }
            if code == end { break }
            if previous < 0 {
                guard code < clear else { return (decoded, true) }
                decoded += 1
                previous = code
                continue
            }
            guard code <= next, code < 4096 else { return (decoded, true) }
            let length = code < next ? Int(lengths[code]) : Int(lengths[previous]) + 1
            decoded += length
            if next < 4096 {
                lengths[next] = lengths[previous] + 1
                next += 1
                if next == 1 << size, size < 12 { size += 1 }
            }
            previous = code
        }
        return (min(decoded, limit), false)
    }
}

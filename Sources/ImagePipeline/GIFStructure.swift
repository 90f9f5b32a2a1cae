/// How many of its pixels a GIF's first frame holds, counted from its LZW codes without drawing
/// them: enough to tell a frame whose data stops early, which libnsgif draws without a word.
///
/// libvips (libnsgif) warns of a GIF cut short inside its data blocks, and the bake refuses it
/// as `truncated`; but a first frame whose data blocks end properly before its last pixel (its
/// blocks cut and the file closed again, or an end-of-information code too soon) is drawn with
/// the missing rows left transparent or in the background colour, at every `failOn` level.
/// Counting the codes (no pixels, no colour table) costs about a tenth of the render: 4.6 ms for
/// a 1800×1200 GIF of 1.5 MB.
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
        while at < n, bytes[at] == 0x21 { at = LZWCodes.subBlocks(bytes, from: at + 2).end }
        guard at + 11 <= n, bytes[at] == 0x2C else { return nil }
        let width = Int(bytes[at + 5]) | Int(bytes[at + 6]) << 8
        let height = Int(bytes[at + 7]) | Int(bytes[at + 8]) << 8
        let flags = bytes[at + 9]
        at += 10
        if flags & 0x80 != 0 { at += 3 << (Int(flags & 7) + 1) }
        guard at < n else { return nil }
        let minimum = Int(bytes[at])
        guard (1...11).contains(minimum) else { return nil }
        let pixels = width * height
        let (decoded, bad) = LZWCodes.count(LZWCodes.subBlocks(bytes, from: at + 1, gathering: true).data, minimum: minimum, upTo: pixels)
        return Count(pixels: pixels, decoded: decoded, badCode: bad)
    }
}

/// The LZW code stream of a GIF frame: its data sub-blocks, read least significant bit first.
private enum LZWCodes {
    /// Walks the sub-blocks that start at `start` (a length byte, then that many bytes, up to a
    /// zero length or the end of `bytes`).
    ///
    /// - Parameters:
    ///   - bytes: the file.
    ///   - start: the first sub-block's length byte.
    ///   - gathering: whether to gather the blocks' bytes into one run.
    /// - Returns: the offset past the terminating zero length, and the gathered bytes (empty
    ///   unless `gathering`).
    static func subBlocks(_ bytes: UnsafeRawBufferPointer, from start: Int, gathering: Bool = false) -> (end: Int, data: [UInt8]) {
        let n = bytes.count
        var data: [UInt8] = []
        // With room for ``count(_:minimum:upTo:)``'s padding.
        if gathering { data.reserveCapacity(min(max(0, n - start), 1 << 26) + 8) }
        var at = start
        while at < n, bytes[at] != 0 {
            let next = at + 1 + Int(bytes[at])
            if gathering { data.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[(at + 1)..<min(n, next)])) }
            at = next
        }
        return (at + 1, data)
    }

    /// The pixels the codes in `data` decode to, up to `limit`, and whether they stopped at a
    /// bad code.
    ///
    /// The sub-blocks' bytes are gathered into one run first (``subBlocks(_:from:gathering:)``),
    /// and each code is read from it by one unaligned load: reading them across blocks, a byte
    /// at a time, with the table in an array, took 10 ms for a 1800×1200 GIF of 1.5 MB (4.6 ms
    /// now, against about 55 ms for its render).
    static func count(_ data: consuming [UInt8], minimum: Int, upTo limit: Int) -> (Int, Bool) {
        var data = data
        let total = data.count
        // Room for the last code's 8-byte load.
        data.append(contentsOf: repeatElement(0, count: 8))
        let clear = 1 << minimum, end = clear + 1
        return data.withUnsafeBufferPointer { d in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4096) { lengths -> (Int, Bool) in
                lengths.initialize(repeating: 1)
                let base = UnsafeRawPointer(d.baseAddress!)
                var bit = 0, next = clear + 2, size = minimum + 1, mask = (1 << size) - 1, previous = -1, decoded = 0
                let bitsTotal = total &* 8
                while decoded < limit, bit &+ size <= bitsTotal {
                    let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                    let code = Int(truncatingIfNeeded: word >> UInt64(bit & 7)) & mask
                    bit &+= size
                    if code == clear {
                        next = clear + 2
                        size = minimum + 1
                        mask = (1 << size) - 1
                        previous = -1
                        continue
                    }
                    if code == end { break }
                    if previous < 0 {
                        guard code < clear else { return (decoded, true) }
                        decoded &+= 1
                        previous = code
                        continue
                    }
                    guard code <= next, code < 4096 else { return (decoded, true) }
                    decoded &+= code < next ? Int(lengths[code]) : Int(lengths[previous]) &+ 1
                    if next < 4096 {
                        lengths[next] = lengths[previous] &+ 1
                        next &+= 1
                        if next == 1 << size, size < 12 {
                            size &+= 1
                            mask = (1 << size) - 1
                        }
                    }
                    previous = code
                }
                return (min(decoded, limit), false)
            }
        }
    }
}

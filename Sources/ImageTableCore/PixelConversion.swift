/// Conversion of an entry's pixels from its table's style to one common layout: 8-bit RGBA,
/// straight (unpremultiplied) alpha, rows packed without padding. For callers that want to hand
/// pixels to something that does not speak the table's style (an encoder, a test, a GPU upload
/// expecting RGBA); the hit itself stays zero-copy.
///
/// The rules are `docs/FORMAT.md`'s: 5-bit channels widen as `(v << 3) | (v >> 2)`,
/// premultiplied channels unpremultiply as `c × 255 / a` rounded half up (0 when `a` is 0), grey repeats
/// into R, G and B, and styles without alpha are opaque.
public enum PixelConversion {
    /// Converts a view's rows into `destination`, `width × height × 4` bytes of RGBA.
    ///
    /// - Parameters:
    ///   - view: the entry.
    ///   - destination: at least `view.width × view.height × 4` bytes.
    public static func rgba8(_ view: ImageView, into destination: UnsafeMutableRawBufferPointer) {
        precondition(destination.count >= view.width * view.height * 4, "destination too small")
        let out = destination.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for y in 0..<view.height {
            let row = view.baseAddress + y * view.bytesPerRow
            let o = out + y * view.width * 4
            switch view.style {
            case .bgra32:
                for x in 0..<view.width {
                    let p = row + x * 4
                    let b = p.load(fromByteOffset: 0, as: UInt8.self), g = p.load(fromByteOffset: 1, as: UInt8.self)
                    let r = p.load(fromByteOffset: 2, as: UInt8.self), a = p.load(fromByteOffset: 3, as: UInt8.self)
                    o[x * 4] = unpremultiply(r, a)
                    o[x * 4 + 1] = unpremultiply(g, a)
                    o[x * 4 + 2] = unpremultiply(b, a)
                    o[x * 4 + 3] = a
                }
            case .bgr32:
                for x in 0..<view.width {
                    let p = row + x * 4
                    o[x * 4] = p.load(fromByteOffset: 2, as: UInt8.self)
                    o[x * 4 + 1] = p.load(fromByteOffset: 1, as: UInt8.self)
                    o[x * 4 + 2] = p.load(fromByteOffset: 0, as: UInt8.self)
                    o[x * 4 + 3] = 255
                }
            case .bgr16:
                for x in 0..<view.width {
                    let v = UInt16(littleEndian: (row + x * 2).loadUnaligned(as: UInt16.self))
                    o[x * 4] = widen(UInt8((v >> 10) & 31))
                    o[x * 4 + 1] = widen(UInt8((v >> 5) & 31))
                    o[x * 4 + 2] = widen(UInt8(v & 31))
                    o[x * 4 + 3] = 255
                }
            case .grayscale8:
                for x in 0..<view.width {
                    let v = row.load(fromByteOffset: x, as: UInt8.self)
                    o[x * 4] = v
                    o[x * 4 + 1] = v
                    o[x * 4 + 2] = v
                    o[x * 4 + 3] = 255
                }
            }
        }
    }

    /// The view's pixels as a new RGBA array, `width × height × 4` bytes.
    ///
    /// - Parameter view: the entry.
    public static func rgba8(_ view: ImageView) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: view.width * view.height * 4) { buffer, count in
            rgba8(view, into: UnsafeMutableRawBufferPointer(buffer))
            count = buffer.count
        }
    }

    /// A 5-bit channel as 8 bits.
    @inline(__always) static func widen(_ v: UInt8) -> UInt8 { (v << 3) | (v >> 2) }

    /// A premultiplied channel as straight colour.
    @inline(__always) static func unpremultiply(_ c: UInt8, _ a: UInt8) -> UInt8 {
        guard a > 0 else { return 0 }
        return UInt8(min(255, (Int(c) * 255 + Int(a) / 2) / Int(a)))
    }
}

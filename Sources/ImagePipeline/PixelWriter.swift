import CPixels
import ImageTableCore

/// Writes one pixel in a table style. Specialised per style so each member is one tight loop.
protocol StylePacker {
    static var bytesPerPixel: Int { get }
    /// Stores a final colour: premultiplied with its alpha for `32BitBGRA`, opaque (alpha
    /// ignored) for the others.
    static func store(_ p: UnsafeMutableRawPointer, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8)
}

/// `B, G, R, A`, premultiplied.
enum PackBGRA: StylePacker {
    static var bytesPerPixel: Int { 4 }
    @inline(__always) static func store(_ p: UnsafeMutableRawPointer, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) {
        let v = UInt32(b) | UInt32(g) << 8 | UInt32(r) << 16 | UInt32(a) << 24
        p.storeBytes(of: v.littleEndian, as: UInt32.self)
    }
}

/// `B, G, R, 0xFF`.
enum PackBGRX: StylePacker {
    static var bytesPerPixel: Int { 4 }
    @inline(__always) static func store(_ p: UnsafeMutableRawPointer, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) {
        let v = UInt32(b) | UInt32(g) << 8 | UInt32(r) << 16 | 0xFF00_0000
        p.storeBytes(of: v.littleEndian, as: UInt32.self)
    }
}

/// Little-endian `0RRRRRGGGGGBBBBB`, each channel rounded to the nearest 5-bit value.
enum Pack555: StylePacker {
    static var bytesPerPixel: Int { 2 }
    @inline(__always) static func five(_ c: UInt8) -> UInt16 { (UInt16(c) &* 31 &+ 127) / 255 }
    @inline(__always) static func store(_ p: UnsafeMutableRawPointer, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) {
        let v = five(r) << 10 | five(g) << 5 | five(b)
        p.storeBytes(of: v.littleEndian, as: UInt16.self)
    }
}

/// One byte of luma: ITU-R BT.601 weights on the sRGB-encoded values,
/// `Y = (77 R + 150 G + 29 B + 128) >> 8` (white stays 255, black 0).
enum PackGrey: StylePacker {
    static var bytesPerPixel: Int { 1 }
    @inline(__always) static func luma(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: (77 &* UInt32(r) &+ 150 &* UInt32(g) &+ 29 &* UInt32(b) &+ 128) >> 8)
    }
    @inline(__always) static func store(_ p: UnsafeMutableRawPointer, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) {
        p.storeBytes(of: luma(r, g, b), as: UInt8.self)
    }
}

/// The pixels drawn for a group: `width × height`, either 3 × `UInt8` sRGB per pixel (opaque
/// sources) or 4 × `Float` straight-alpha sRGBA in 0…255 (sources with alpha), rows `rowBytes`
/// apart (more than a row's pixels when they are a crop of a larger image).
struct ContentPixels {
    let base: UnsafeRawPointer
    let width: Int
    let height: Int
    let hasAlpha: Bool
    let rowBytes: Int

    init(base: UnsafeRawPointer, width: Int, height: Int, hasAlpha: Bool, rowBytes: Int? = nil) {
        self.base = base
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.rowBytes = rowBytes ?? width * (hasAlpha ? 16 : 3)
    }

    var bytesPerPixel: Int { hasAlpha ? 16 : 3 }
}

/// Draws one member into its destination: the content at its placement, the rest of the slot
/// transparent (`32BitBGRA`) or background, rounded corners, flattening, style packing and zero
/// row padding, in one pass over the destination.
enum PixelWriter {
    static func write(_ content: ContentPixels, placement: PixelRect, format: TableFormat,
                      into destination: UnsafeMutableRawPointer, bytesPerRow: Int) {
        switch format.style {
        case .bgra32: write(PackBGRA.self, content, placement, format, destination, bytesPerRow)
        case .bgr32: write(PackBGRX.self, content, placement, format, destination, bytesPerRow)
        case .bgr16: write(Pack555.self, content, placement, format, destination, bytesPerRow)
        case .grayscale8: write(PackGrey.self, content, placement, format, destination, bytesPerRow)
        }
    }

    @inline(__always) private static func clampRound(_ v: Float) -> UInt8 {
        UInt8(min(max(v, 0), 255).rounded(.toNearestOrAwayFromZero))
    }

    private static func write<P: StylePacker>(_: P.Type, _ content: ContentPixels, _ placement: PixelRect,
                                              _ format: TableFormat, _ dst: UnsafeMutableRawPointer, _ bytesPerRow: Int) {
        let bpp = P.bytesPerPixel
        let keepsAlpha = format.style.hasAlpha
        let bg = format.rendering.background
        let (bgR, bgG, bgB) = (Float(bg.red), Float(bg.green), Float(bg.blue))
        let rowBytes = format.width * bpp
        let cw = placement.width, ch = placement.height, px = placement.x, py = placement.y
        let radius = Float(max(0, min(format.rendering.cornerRadius, Double(min(cw, ch)) / 2)))
        let cornerBand = radius > 0 ? Int(radius.rounded(.up)) : 0
        let srcStride = content.rowBytes

        @inline(__always) func bar(_ p: UnsafeMutableRawPointer) {
            if keepsAlpha { P.store(p, 0, 0, 0, 0) } else { P.store(p, bg.red, bg.green, bg.blue, 255) }
        }
        /// Stores straight-alpha colour `c` with coverage-scaled alpha `a` (both 0…255 floats).
        @inline(__always) func shade(_ p: UnsafeMutableRawPointer, _ r: Float, _ g: Float, _ b: Float, _ a: Float) {
            let a = min(max(a, 0), 255)
            // Clamped before they are multiplied: unpremultiplied from a resize that rang, colour
            // beside an edge of alpha can be far above 255 (at a small alpha), and premultiplied
            // again it came out above its alpha, which FORMAT.md rules out for `32BitBGRA`.
            let r = min(max(r, 0), 255), g = min(max(g, 0), 255), b = min(max(b, 0), 255)
            if keepsAlpha {
                let k = a / 255
                P.store(p, clampRound(r * k), clampRound(g * k), clampRound(b * k), clampRound(a))
            } else {
                let k = a / 255, j = 1 - k
                P.store(p, clampRound(r * k + bgR * j), clampRound(g * k + bgG * j), clampRound(b * k + bgB * j), 255)
            }
        }
        /// Coverage of content pixel (x, y) by the rounded rectangle, 0…1.
        @inline(__always) func coverage(_ x: Int, _ y: Int) -> Float {
            let fx = Float(x) + 0.5, fy = Float(y) + 0.5
            let cx = fx < radius ? radius : (fx > Float(cw) - radius ? Float(cw) - radius : fx)
            let cy = fy < radius ? radius : (fy > Float(ch) - radius ? Float(ch) - radius : fy)
            let dx = fx - cx, dy = fy - cy
            let d = (dx * dx + dy * dy).squareRoot()
            return min(max(radius - d + 0.5, 0), 1)
        }

        for y in 0..<format.height {
            let row = dst + y * bytesPerRow
            if y < py || y >= py + ch {
                for x in 0..<format.width { bar(row + x * bpp) }
            } else {
                for x in 0..<px { bar(row + x * bpp) }
                let cy = y - py
                let src = content.base + cy * srcStride
                let out = row + px * bpp
                let edge = (cy < cornerBand || cy >= ch - cornerBand) ? cornerBand : 0
                if content.hasAlpha {
                    let f = src.assumingMemoryBound(to: Float.self)
                    for x in 0..<cw {
                        var a = f[4 * x + 3]
                        if x < edge || x >= cw - edge { a *= coverage(x, cy) }
                        shade(out + x * bpp, f[4 * x], f[4 * x + 1], f[4 * x + 2], a)
                    }
                } else {
                    let u = src.assumingMemoryBound(to: UInt8.self)
                    // Corners at both ends of the row, a tight loop between them.
                    let inner = max(edge, min(cw - edge, cw))
                    for x in 0..<min(edge, cw) {
                        shade(out + x * bpp, Float(u[3 * x]), Float(u[3 * x + 1]), Float(u[3 * x + 2]), 255 * coverage(x, cy))
                    }
                    let from = min(edge, cw)
                    if inner > from {
                        cpixels_pack_rgb(u + 3 * from, Int32(inner - from), Int32(format.style.code),
                                         (out + from * bpp).assumingMemoryBound(to: UInt8.self))
                    }
                    for x in inner..<cw {
                        shade(out + x * bpp, Float(u[3 * x]), Float(u[3 * x + 1]), Float(u[3 * x + 2]), 255 * coverage(x, cy))
                    }
                }
                for x in (px + cw)..<format.width { bar(row + x * bpp) }
            }
            if bytesPerRow > rowBytes { (row + rowBytes).initializeMemory(as: UInt8.self, repeating: 0, count: bytesPerRow - rowBytes) }
        }
    }
}

import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A destination buffer laid out like a table slot (rows at multiples of 64 bytes), prefilled
/// with 0xAB so that untouched bytes show.
final class Slot: @unchecked Sendable {
    let spec: TableFormat
    let bytesPerRow: Int
    let buffer: UnsafeMutableRawBufferPointer

    init(_ spec: TableFormat) {
        self.spec = spec
        bytesPerRow = (spec.width * spec.style.bytesPerPixel + 63) / 64 * 64
        buffer = .allocate(byteCount: bytesPerRow * spec.height, alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: 0xAB)
    }

    deinit { buffer.deallocate() }

    var target: RenderTarget { RenderTarget(format: spec, pixels: buffer, bytesPerRow: bytesPerRow) }

    /// The raw bytes of pixel (x, y).
    func bytes(_ x: Int, _ y: Int) -> [UInt8] {
        let bpp = spec.style.bytesPerPixel
        let start = y * bytesPerRow + x * bpp
        return Array(buffer[start..<(start + bpp)])
    }

    /// Pixel (x, y) decoded per FORMAT.md to 8-bit straight RGBA (5-bit widened, grey replicated,
    /// BGRA unpremultiplied with `round(c × 255 / a)`).
    func rgba(_ x: Int, _ y: Int) -> [Int] {
        let b = bytes(x, y).map(Int.init)
        switch spec.style {
        case .bgra32:
            let a = b[3]
            guard a > 0 else { return [0, 0, 0, 0] }
            func un(_ c: Int) -> Int { Int((Double(c) * 255 / Double(a)).rounded()) }
            return [un(b[2]), un(b[1]), un(b[0]), a]
        case .bgr32: return [b[2], b[1], b[0], 255]
        case .bgr16:
            let v = b[0] | b[1] << 8
            func widen(_ c: Int) -> Int { (c << 3) | (c >> 2) }
            return [widen(v >> 10 & 31), widen(v >> 5 & 31), widen(v & 31), 255]
        case .grayscale8: return [b[0], b[0], b[0], 255]
        }
    }

    /// Whether every padding byte at the end of every row is zero.
    var paddingIsZero: Bool {
        let rowBytes = spec.width * spec.style.bytesPerPixel
        for y in 0..<spec.height {
            for i in rowBytes..<bytesPerRow where buffer[y * bytesPerRow + i] != 0 { return false }
        }
        return true
    }
}

/// An 8-bit image in memory: `bands` bytes per pixel, rows packed.
struct RasterImage {
    var width: Int
    var height: Int
    var bands: Int
    var pixels: [UInt8]

    func pixel(_ x: Int, _ y: Int) -> [Int] {
        let i = (y * width + x) * bands
        return pixels[i..<(i + bands)].map(Int.init)
    }
}

/// References made by libvips directly, without the pipeline: `vips_thumbnail` on the file, as
/// `vipsthumbnail` does. Runs under the pipeline's libvips lock (see PipelineRuntime.withLibvips).
enum Reference {
    enum Mode { case cover(VipsInteresting), inside, force }

    static func thumbnail(_ path: String, width: Int, height: Int, _ mode: Mode) throws -> RasterImage {
        try PipelineRuntime.withLibvips {
            var out: UnsafeMutablePointer<VipsImage>?
            let status: Int32
            switch mode {
            case .cover(let crop):
                status = cvips_reference_thumbnail(path, &out, Int32(width), Int32(height), VIPS_SIZE_BOTH, crop)
            case .inside:
                status = cvips_reference_thumbnail(path, &out, Int32(width), Int32(height), VIPS_SIZE_DOWN, VIPS_INTERESTING_NONE)
            case .force:
                status = cvips_reference_thumbnail(path, &out, Int32(width), Int32(height), VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
            }
            guard status == 0, let image = out else { throw referenceError() }
            defer { g_object_unref(image) }
            return try raster(image)
        }
    }

    /// Decodes a whole file at full size, upright (for comparisons).
    static func load(_ path: String) throws -> RasterImage {
        try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(path) else { throw referenceError() }
            defer { g_object_unref(image) }
            return try raster(image)
        }
    }

    /// Must be called with the lock held.
    static func raster(_ image: UnsafeMutablePointer<VipsImage>) throws -> RasterImage {
        var size = 0
        guard let data = vips_image_write_to_memory(image, &size) else { throw referenceError() }
        defer { g_free(data) }
        let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
        return RasterImage(width: Int(image.pointee.Xsize), height: Int(image.pointee.Ysize), bands: Int(image.pointee.Bands), pixels: bytes)
    }

    /// The libvips error buffer as an error (must be called with the lock held).
    static func referenceError() -> Error {
        let text = vips_error_buffer_copy().map { p in defer { g_free(p) }; return String(cString: p) } ?? ""
        return ImageTableError(.renderFailed, "reference failed", cause: text)
    }
}

/// Differences between two images of equal size, per channel in 8-bit units.
struct Difference: CustomStringConvertible {
    var mean = 0.0
    var max = 0
    /// Fraction of channel values that differ by more than `threshold`.
    var over = 0.0
    var threshold = 8

    init(_ a: (Int, Int) -> [Int], _ b: (Int, Int) -> [Int], width: Int, height: Int, channels: Int = 3,
         x0: Int = 0, y0: Int = 0, threshold: Int = 8) {
        self.threshold = threshold
        var total = 0, count = 0, big = 0
        for y in y0..<(y0 + height) {
            for x in x0..<(x0 + width) {
                let p = a(x, y), q = b(x - x0, y - y0)
                for c in 0..<channels {
                    let d = abs(p[c] - q[c])
                    total += d
                    count += 1
                    if d > threshold { big += 1 }
                    max = Swift.max(max, d)
                }
            }
        }
        mean = Double(total) / Double(Swift.max(count, 1))
        over = Double(big) / Double(Swift.max(count, 1))
    }

    var description: String { String(format: "mean %.3f max %d over%d %.4f", mean, max, threshold, over) }
}

/// Minimal PNG encoder (stored deflate blocks, no compression) for fixtures with exact pixels.
enum PNGWriter {
    /// An 8-bit RGBA (colour type 6) or RGB (type 2) PNG.
    static func encode(width: Int, height: Int, channels: Int, pixels: [UInt8]) -> [UInt8] {
        precondition(pixels.count == width * height * channels)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * channels + 1) * height)
        for y in 0..<height {
            raw.append(0)
            raw.append(contentsOf: pixels[(y * width * channels)..<((y + 1) * width * channels)])
        }
        var z: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, raw.count - offset)
            let final: UInt8 = offset + n == raw.count ? 1 : 0
            z.append(final)
            z.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)])
            z.append(contentsOf: raw[offset..<(offset + n)])
            offset += n
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        z.append(contentsOf: be32(b << 16 | a))
        return signature + ihdr(width: width, height: height, colourType: channels == 4 ? 6 : 2)
            + chunk("IDAT", z) + chunk("IEND", [])
    }

    /// A PNG that declares `width` × `height` RGB pixels but carries only a few bytes of data.
    static func headerOnly(width: Int, height: Int) -> [UInt8] {
        signature + ihdr(width: width, height: height, colourType: 2) + chunk("IDAT", [0x78, 0x01, 0x01, 0, 0, 0xFF, 0xFF]) + chunk("IEND", [])
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func ihdr(width: Int, height: Int, colourType: UInt8) -> [UInt8] {
        chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [8, colourType, 0, 0, 0])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(CRC32.checksum(body))
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// Renders one source into fresh slots for `specs`.
func render(_ source: SourceImage, _ specs: [TableFormat],
            renderer: ImageRenderer = ImageRenderer()) throws(ImageTableError) -> (RenderReport, [Slot]) {
    let slots = specs.map(Slot.init)
    let report = try renderer.render(source, into: slots.map(\.target))
    return (report, slots)
}

import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs `imagetable ARGUMENTS`.
func imagetable(_ arguments: String...) throws -> ProcessResult { try run(Products.imagetable, arguments) }

/// Runs `imagetable ARGUMENTS` from an array.
func imagetable(_ arguments: [String]) throws -> ProcessResult { try run(Products.imagetable, arguments) }

/// One entry as the tests write it.
struct TestEntry {
    let key: String
    let source: UUID
    /// `height` rows of `width × bytesPerPixel` bytes in the table's style, unpadded.
    let pixels: [UInt8]
    let contentRect: PixelRect?
}

/// A table written with the core API: deterministic, position-dependent pixels per key, valid
/// for the style (premultiplied BGRA with colour ≤ alpha and some fully transparent pixels,
/// X = 0xFF, bit 15 clear).
struct TestTable {
    let path: String
    let descriptor: TableFormat
    let entries: [TestEntry]

    init(at path: String, style: PixelStyle, width: Int = 9, height: Int = 7, capacity: Int = 8,
         keys: [String], contentRects: [String: PixelRect] = [:], fill: ((String, Int, Int) -> [UInt8])? = nil) throws {
        self.path = path
        descriptor = TableFormat(name: "t-\(style.rawValue)", family: "tests", width: width, height: height, style: style,
                                      capacity: capacity, scale: 2)
        let table = try ImageTableWriter(path: path, format: descriptor, options: .init(lockTimeout: 2, durability: .processCrashOnly))
        defer { table.close() }
        var entries: [TestEntry] = []
        for key in keys {
            let pixels = fill?(key, width, height) ?? Self.pattern(key: key, width: width, height: height, style: style)
            let entry = TestEntry(key: key, source: UUID(), pixels: pixels, contentRect: contentRects[key])
            try pixels.withUnsafeBytes { raw in
                _ = try table.write(key: key, sourceUUID: entry.source, pixels: raw, bytesPerRow: width * style.bytesPerPixel,
                                    contentRect: entry.contentRect)
            }
            entries.append(entry)
        }
        self.entries = entries
    }

    static func pattern(key: String, width: Int, height: Int, style: PixelStyle) -> [UInt8] {
        let seed = key.utf8.reduce(UInt32(2166136261)) { ($0 ^ UInt32($1)) &* 16777619 }
        let bpp = style.bytesPerPixel
        var out = [UInt8](repeating: 0, count: width * height * bpp)
        for i in out.indices { out[i] = UInt8(truncatingIfNeeded: seed &+ UInt32(i &* 37 &+ (i / (width * bpp)) &* 101)) }
        for p in 0..<(width * height) {
            let o = p * bpp
            switch style {
            case .bgra32:
                if p % 5 == 0 { out[o + 3] = 0 }  // fully transparent pixels convert to 0, 0, 0, 0
                out[o] = min(out[o], out[o + 3]); out[o + 1] = min(out[o + 1], out[o + 3]); out[o + 2] = min(out[o + 2], out[o + 3])
            case .bgr32: out[o + 3] = 0xFF
            case .bgr16: out[o + 1] &= 0x7F
            case .grayscale8: break
            }
        }
        return out
    }
}

/// A PNG file read back: its header fields, parsed here, and its pixels, decoded by libvips.
struct DecodedPNG {
    let width: Int
    let height: Int
    let bitDepth: Int
    /// PNG colour type: 0 grey, 2 RGB, 6 RGBA.
    let colourType: Int
    let bands: Int
    let pixels: [UInt8]

    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try #require(bytes.count > 33 && bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
        try #require(String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR")
        func be32(_ o: Int) -> Int { bytes[o..<o + 4].reduce(0) { $0 << 8 | Int($1) } }
        width = be32(16)
        height = be32(20)
        bitDepth = Int(bytes[24])
        colourType = Int(bytes[25])
        (bands, pixels) = try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(path) else { throw ImageTableError(.decodeFailed, "libvips could not open \(path)") }
            defer { g_object_unref(image) }
            var size = 0
            guard let data = vips_image_write_to_memory(image, &size) else { throw ImageTableError(.decodeFailed, "no pixels in \(path)") }
            defer { g_free(data) }
            return (Int(image.pointee.Bands), Array(UnsafeRawBufferPointer(start: data, count: size)))
        }
    }

    /// Decodes PNG bytes (from standard output) by way of a file.
    init(data: Data) throws {
        let scratch = try TemporaryDirectory()
        try data.write(to: URL(fileURLWithPath: scratch.file("stdout.png")))
        try self.init(path: scratch.file("stdout.png"))
    }

    /// Pixel (x, y)'s channels.
    func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let o = (y * width + x) * bands
        return Array(pixels[o..<o + bands])
    }
}

/// The PNG pixels `docs/FORMAT.md` says an entry converts to, computed here from the rules
/// (not with `PixelConversion`): straight RGBA, RGB or grey.
func expectedPNGPixels(_ pixels: [UInt8], style: PixelStyle, width: Int, height: Int, region: PixelRect? = nil) -> [UInt8] {
    let r = region ?? PixelRect(x: 0, y: 0, width: width, height: height)
    let bpp = style.bytesPerPixel
    var out: [UInt8] = []
    for y in r.y..<(r.y + r.height) {
        for x in r.x..<(r.x + r.width) {
            let p = Array(pixels[((y * width + x) * bpp)..<((y * width + x + 1) * bpp)])
            switch style {
            case .bgra32:
                let a = Int(p[3])
                func straight(_ c: UInt8) -> UInt8 { a == 0 ? 0 : UInt8(min(255, (Int(c) * 255 + a / 2) / a)) }
                out += [straight(p[2]), straight(p[1]), straight(p[0]), p[3]]
            case .bgr32:
                out += [p[2], p[1], p[0]]
            case .bgr16:
                let v = Int(p[0]) | Int(p[1]) << 8
                func widen(_ c: Int) -> UInt8 { UInt8((c << 3) | (c >> 2)) }
                out += [widen((v >> 10) & 31), widen((v >> 5) & 31), widen(v & 31)]
            case .grayscale8:
                out += [p[0]]
            }
        }
    }
    return out
}

/// Flips bit 0 of the byte at `offset` of `path`.
func flipByte(in path: String, at offset: Int) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    let byte = try #require(try handle.read(upToCount: 1)?.first)
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: [byte ^ 1])
}

/// Every regular file below `root`, as paths relative to it.
func filesBelow(_ root: String) -> Set<String> {
    var found = Set<String>()
    let enumerator = FileManager.default.enumerator(atPath: root)
    while let relative = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
            found.insert(relative)
        }
    }
    return found
}

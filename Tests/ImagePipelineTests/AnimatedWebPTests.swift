import Foundation
@testable import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// Animated WebPs are drawn from their first frame, handed to libvips without the later frames
/// (``WebPStructure``): libvips 8.14 looks at every frame first, in time quadratic in their number.
@Suite struct AnimatedWebPTests {
    static func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le24(v) + [UInt8(v >> 24 & 0xFF)] }
    /// A RIFF chunk, padded to an even size unless `padded` is false.
    static func chunk(_ tag: String, _ data: [UInt8], padded: Bool = true) -> [UInt8] {
        Array(tag.utf8) + le32(data.count) + data + (padded && data.count % 2 == 1 ? [0] : [])
    }
    static func riff(_ chunks: [UInt8]) -> [UInt8] { Array("RIFF".utf8) + le32(4 + chunks.count) + Array("WEBP".utf8) + chunks }

    /// An animation on a 64×48 canvas: `frames` (a `VP8L` chunk each) at (x, y) each, then an
    /// EXIF chunk with `orientation` when one is given.
    static func animation(_ frames: [(vp8l: [UInt8], x: Int, y: Int, width: Int, height: Int)], orientation: UInt32? = nil) -> [UInt8] {
        let flags: UInt8 = 0x02 | 0x10 | (orientation == nil ? 0 : 0x08)  // animation, alpha, EXIF
        var body = chunk("VP8X", [flags, 0, 0, 0] + le24(63) + le24(47)) + chunk("ANIM", [0, 0, 0, 0, 0, 0])
        for f in frames {
            // x/2, y/2, width-1, height-1, duration 100 ms, no blending, no disposal.
            body += chunk("ANMF", le24(f.x / 2) + le24(f.y / 2) + le24(f.width - 1) + le24(f.height - 1) + le24(100) + [0x02] + f.vp8l)
        }
        if let orientation { body += chunk("EXIF", ResamplerTests.exif(bigEndian: false, type: 3, count: 1, value: orientation)) }
        return riff(body)
    }

    /// A corpus photo as a 48×32 lossless WebP's `VP8L` chunk, made by libvips.
    static func frame(_ photo: String, in dir: TemporaryDirectory) throws -> (vp8l: [UInt8], x: Int, y: Int, width: Int, height: Int) {
        let png = dir.file("\(photo).png"), webp = dir.file("\(photo).webp")
        try Reference.convert(Corpus.photo(photo), to: png, maxSize: 48)
        try Reference.convert(png, to: webp + "[lossless,strip]")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: webp)))
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if bytes[at..<at + 4].elementsEqual("VP8L".utf8) { return (Array(bytes[at..<at + 8 + size + (size & 1)]), 8, 10, 48, 32) }
            at += 8 + size + (size & 1)
        }
        throw ImageTableError(.decodeFailed, "libvips wrote no VP8L chunk", path: webp)
    }

    static let formats = [TableFormat(width: 40, height: 40, style: .bgra32), TableFormat(width: 24, height: 16, style: .grayscale8)]

    static func renderBytes(_ bytes: [UInt8]) throws(ImageTableError) -> (RenderReport, [[UInt8]]) {
        let (report, slots) = try render(.data(Data(bytes), name: "anim.webp"), formats)
        return (report, slots.map { Array($0.buffer) })
    }

    /// Three frames draw exactly what the first alone draws on the same canvas, its offset and
    /// transparent surround, and the EXIF orientation after the frames, included.
    @Test func anAnimationDrawsItsFirstFrameAsLibvipsDoes() throws {
        let dir = try TemporaryDirectory()
        let frames = try ["Landscape_1", "Landscape_2", "Landscape_3"].map { try Self.frame($0, in: dir) }
        for orientation: UInt32? in [nil, 6] {
            let (alone, aloneSlots) = try Self.renderBytes(Self.animation([frames[0]], orientation: orientation))
            let (whole, wholeSlots) = try Self.renderBytes(Self.animation(frames, orientation: orientation))
            #expect(whole.source.loader.hasPrefix("webpload"))
            #expect(whole.source.orientation == Int(orientation ?? 1))
            #expect((whole.source.width, whole.source.height) == (orientation == nil ? (64, 48) : (48, 64)))
            #expect(whole.source.hasAlpha)
            #expect(wholeSlots == aloneSlots, "orientation \(orientation.map(String.init) ?? "none")")
            #expect(whole.warnings.isEmpty && alone.warnings.isEmpty)
            // Not blank: the frame's pixels, and the canvas around it transparent.
            let slot = Slot(Self.formats[0])
            _ = try ImageRenderer().render(.data(Data(Self.animation(frames)), name: "anim.webp"), into: [slot.target])
            #expect(slot.rgba(20, 20)[3] == 255 && slot.rgba(0, 0)[3] == 0)
        }
    }

    /// Later frames are not read: a frame whose bitstream is not a WebP's, after the first, is
    /// never looked at (libvips refused the whole file for it).
    @Test func laterFramesAreNotRead() throws {
        let dir = try TemporaryDirectory()
        let first = try Self.frame("Landscape_1", in: dir)
        let garbage = (vp8l: Self.chunk("VP8L", [UInt8](repeating: 0xEE, count: 31)), x: 0, y: 0, width: 64, height: 48)
        let (_, alone) = try Self.renderBytes(Self.animation([first]))
        let (_, whole) = try Self.renderBytes(Self.animation([first, garbage, garbage]))
        #expect(whole == alone)
    }

    /// 30,000 frames render as one: libvips alone took about 9 s over them (quadratic; 100,000
    /// took minutes).
    @Test func manyFramesRenderAsTheFirst() throws {
        let dir = try TemporaryDirectory()
        let first = try Self.frame("Landscape_1", in: dir)
        let tiny: [UInt8] = [0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0x11, 0xFD, 0x0F, 0x44, 0x44, 0xFF, 0x03]  // 1×1 lossless
        let dot = (vp8l: Self.chunk("VP8L", tiny), x: 0, y: 0, width: 1, height: 1)
        let (_, alone) = try Self.renderBytes(Self.animation([first]))
        let (_, whole) = try Self.renderBytes(Self.animation([first] + Array(repeating: dot, count: 30_000)))
        #expect(whole == alone)
    }

    /// A still image among 20,000 chunks no decoder reads renders as the image alone, which is
    /// what libvips is handed: libwebp lists every chunk (8 million took it 5.6 s and 600 MB).
    @Test func chunksNoDecoderReadsAreDropped() throws {
        let dir = try TemporaryDirectory()
        let image = try Self.frame("Landscape_1", in: dir).vp8l
        let (_, alone) = try Self.renderBytes(Self.riff(image))
        let junk = Array(Array(repeating: Self.chunk("JUNK", []), count: 10_000).joined())
        let (report, crowded) = try Self.renderBytes(Self.riff(junk + image + junk))
        #expect(crowded == alone)
        #expect((report.source.width, report.source.height) == (48, 32))
    }

    /// What is cut and what is left to libvips whole.
    @Test func onlyWellFormedAnimationsAreCut() {
        func cut(_ bytes: [UInt8]) -> [UInt8]? { bytes.withUnsafeBytes { WebPStructure.firstFrameOnly($0) } }
        let frame = Self.chunk("ANMF", [UInt8](repeating: 1, count: 17), padded: true)
        let vp8x = Self.chunk("VP8X", [0x02, 0, 0, 0] + Self.le24(9) + Self.le24(9)), anim = Self.chunk("ANIM", [0, 0, 0, 0, 0, 0])
        let exif = Self.chunk("EXIF", [7, 7, 7], padded: false)
        // Two frames: the second goes, the EXIF after it stays (last and unpadded, as it was),
        // and the RIFF size is the new one.
        let two = Self.riff(vp8x + anim + frame + frame + exif)
        let expected = Self.riff(vp8x + anim + frame + exif)
        #expect(cut(two) == expected)
        // Chunks no decoder reads stay, unless there are more than 64 chunks in all.
        let junk = Self.chunk("JUNK", [1, 2])
        #expect(cut(Self.riff(vp8x + anim + junk + frame + frame)) == Self.riff(vp8x + anim + junk + frame))
        let still = Self.chunk("VP8L", [1, 2, 3])
        #expect(cut(Self.riff(still + Array(Array(repeating: junk, count: WebPStructure.chunksKeptWhole - 1).joined()))) == nil)
        #expect(cut(Self.riff(junk + still + Array(Array(repeating: junk, count: WebPStructure.chunksKeptWhole).joined())))
                    == Self.riff(still))
        #expect(cut(Self.riff(vp8x + anim + frame)) == nil, "one frame: nothing to cut")
        #expect(cut(Self.riff(Self.chunk("VP8L", [1, 2, 3]))) == nil, "a still image")
        #expect(cut(Array(two.dropLast())) == nil, "the RIFF size runs past the file")
        var overrun = two
        overrun[12 + vp8x.count + 5] = 0xFF  // ANIM's size, its second byte: the chunk runs past the RIFF size
        #expect(cut(overrun) == nil)
        #expect(cut(Array("RIFF".utf8) + Self.le32(4) + Array("WAVE".utf8)) == nil, "not a WebP")
        #expect(cut(two + [0, 0, 0]) == expected, "bytes after the RIFF are dropped, as libwebp ignores them")
    }
}

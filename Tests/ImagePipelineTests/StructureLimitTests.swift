import Foundation
@testable import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// WebPs of too many frames or chunks and TIFFs of too many pages are refused before libvips
/// sees them (``WebPStructure``, ``TIFFStructure``): libvips looks at every frame, chunk and
/// page first, for minutes (100,000 WebP frames in 4 MB; 2.3 million TIFF pages in 250 MB).
@Suite struct StructureLimitTests {
    static func le(_ v: Int, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(v >> (8 * $0) & 0xFF) } }
    /// A RIFF chunk, padded to an even size.
    static func chunk(_ tag: String, _ data: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + le(data.count, 4) + data + (data.count % 2 == 1 ? [0] : [])
    }
    static func riff(_ chunks: [UInt8]) -> [UInt8] { Array("RIFF".utf8) + le(4 + chunks.count, 4) + Array("WEBP".utf8) + chunks }

    /// A 1×1 lossless frame.
    static let dot: [UInt8] = chunk("VP8L", [0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0x11, 0xFD, 0x0F, 0x44, 0x44, 0xFF, 0x03])

    /// An animation of `frames` 1×1 frames on a 2×2 canvas, then `extra` empty unknown chunks.
    static func animation(frames: Int, extra: Int = 0) -> [UInt8] {
        let frame = chunk("ANMF", le(0, 3) + le(0, 3) + le(0, 3) + le(0, 3) + le(100, 3) + [0] + dot)
        let junk = chunk("JUNK", [])
        var body = chunk("VP8X", [0x12, 0, 0, 0] + le(1, 3) + le(1, 3)) + chunk("ANIM", [0, 0, 0, 0, 0, 0])
        body.reserveCapacity(body.count + frames * frame.count + extra * junk.count)
        for _ in 0..<frames { body += frame }
        for _ in 0..<extra { body += junk }
        return riff(body)
    }

    static func refusal(webp bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { WebPStructure.refusal($0) } }
    static func refusal(tiff bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { TIFFStructure.refusal($0) } }

    @Test func webPsOfTooManyFramesOrChunksAreRefused() throws {
        let most = WebPStructure.maxFrames
        #expect(Self.refusal(webp: Self.animation(frames: most)) == nil)
        let tooMany = Self.animation(frames: most + 1)
        #expect(Self.refusal(webp: tooMany) == "webp: more than \(most) frames")
        // A still image among chunks no decoder reads: 2 + 99,998 chunks, then one more.
        let chunks = WebPStructure.maxChunks
        #expect(Self.refusal(webp: Self.animation(frames: 0, extra: chunks - 2)) == nil)
        #expect(Self.refusal(webp: Self.animation(frames: 0, extra: chunks - 1)) == "webp: more than \(chunks) chunks")
        // Chunks past the RIFF size are not counted; neither is a file of another kind.
        var cut = tooMany
        cut.replaceSubrange(4..<8, with: Self.le(4 + 18 + 14 + 10, 4))
        #expect(Self.refusal(webp: cut) == nil)
        #expect(Self.refusal(webp: Array("RIFF".utf8) + Self.le(4, 4) + Array("WAVE".utf8) + [UInt8](repeating: 0, count: 64)) == nil)
        // A simple file is its first chunk, an image: libwebp lists nothing after it.
        #expect(Self.refusal(webp: Self.riff(Self.dot + Array(Array(repeating: Self.chunk("JUNK", []), count: chunks + 1).joined()))) == nil)
        // Sizes of 2³² - 1 end the count, wherever the file ends.
        #expect(Self.refusal(webp: Self.riff(Self.chunk("VP8X", [0x12, 0, 0, 0] + Self.le(1, 3) + Self.le(1, 3)) + Array("JUNK".utf8)
                                             + [0xFF, 0xFF, 0xFF, 0xFF])) == nil)

        // Through the renderer: refused as a JPEG of too many scans is, before libvips.
        do {
            _ = try render(.data(Data(tooMany), name: "anim.webp"), [TableFormat(width: 8, height: 8, style: .bgra32)])
            Issue.record("rendered \(most + 1) frames")
        } catch {
            #expect(error.code == .decodeFailed && error.message == "could not decode" && error.cause == "webp: more than \(most) frames",
                    "\(error)")
        }
        // A few frames render: the first, on its canvas.
        let (report, _) = try render(.data(Data(Self.animation(frames: 3)), name: "anim.webp"), [TableFormat(width: 8, height: 8, style: .bgra32)])
        #expect(report.source.loader.hasPrefix("webpload") && (report.source.width, report.source.height) == (2, 2))
    }

    /// A classic little-endian TIFF of `pages` 1×1 grey pages (or BigTIFF), each linking to the
    /// next, the last to `last` (0, or a page before it for a loop), each with `privateTags`
    /// tags of its own that libtiff does not know.
    static func tiff(pages: Int, big: Bool = false, loopingTo loop: Int? = nil, privateTags: Int = 0) -> [UInt8] {
        let (countSize, entrySize, offsetSize, header) = big ? (8, 20, 8, 16) : (2, 12, 4, 8)
        let entries: [(Int, Int, Int)] = [(256, 3, 1), (257, 3, 1), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, header),
                                          (277, 3, 1), (278, 3, 1), (279, 4, 1)] + (0..<privateTags).map { (65000 - privateTags + $0, 3, 1) }
        let strip = 2
        let size = countSize + entries.count * entrySize + offsetSize
        let first = header + strip
        var out: [UInt8] = big ? [0x49, 0x49, 43, 0, 8, 0, 0, 0] + le(first, 8) : [0x49, 0x49, 42, 0] + le(first, 4)
        out += [0x80, 0]
        // Every page alike but its link: built once, the links written in after.
        var page = le(entries.count, countSize)
        for (tag, type, value) in entries { page += le(tag, 2) + le(type, 2) + le(1, big ? 8 : 4) + le(value, big ? 8 : 4) }
        page += [UInt8](repeating: 0, count: offsetSize)
        out.reserveCapacity(first + pages * size)
        for _ in 0..<pages { out += page }
        for i in 0..<pages {
            let next = i == pages - 1 ? (loop.map { first + $0 * size } ?? 0) : first + (i + 1) * size
            let at = first + i * size + size - offsetSize
            for k in 0..<offsetSize { out[at + k] = UInt8(next >> (8 * k) & 0xFF) }
        }
        return out
    }

    @Test func tiffsOfTooManyPagesAreRefused() throws {
        let most = TIFFStructure.maxPages
        #expect(Self.refusal(tiff: Self.tiff(pages: most)) == nil)
        let tooMany = Self.tiff(pages: most + 1)
        #expect(Self.refusal(tiff: tooMany) == "tiff: more than \(most) pages")
        #expect(Self.refusal(tiff: Self.tiff(pages: most + 1, big: true)) == "tiff: more than \(most) pages")
        // A loop is followed once round, as libtiff follows it (and warns), and a chain that
        // breaks off is left to libvips to report.
        #expect(Self.refusal(tiff: Self.tiff(pages: 3, loopingTo: 1)) == nil)
        #expect(Self.refusal(tiff: Array(tooMany.prefix(tooMany.count / 2))) == nil)
        #expect(Self.refusal(tiff: Array("II+\0".utf8) + [UInt8](repeating: 0, count: 32)) == nil)
        // Tags libtiff does not know cost it a warning and a field each: 20,000 in all, not more.
        let unknown = TIFFStructure.maxUnknownTags
        #expect(Self.refusal(tiff: Self.tiff(pages: unknown / 200, privateTags: 200)) == nil)
        #expect(Self.refusal(tiff: Self.tiff(pages: unknown / 200 + 1, privateTags: 200)) == "tiff: more than \(unknown) tags libtiff does not know")
        // A directory of more than 4,096 entries ends the chain, as libtiff refuses it.
        #expect(Self.refusal(tiff: Self.tiff(pages: unknown / 4_000 + 2, privateTags: 4_100)) == nil)

        do {
            _ = try render(.data(Data(tooMany), name: "pages.tif"), [TableFormat(width: 8, height: 8, style: .grayscale8)])
            Issue.record("rendered \(most + 1) pages")
        } catch {
            #expect(error.code == .decodeFailed && error.cause == "tiff: more than \(most) pages", "\(error)")
        }
        do {
            _ = try render(.data(Data(Self.tiff(pages: unknown / 200 + 1, privateTags: 200)), name: "tags.tif"),
                           [TableFormat(width: 8, height: 8, style: .grayscale8)])
            Issue.record("rendered \(unknown + 200) unknown tags")
        } catch {
            #expect(error.code == .decodeFailed && error.cause == "tiff: more than \(unknown) tags libtiff does not know", "\(error)")
        }
        // A loop renders its first page, with libtiff's warning of the loop.
        let (report, _) = try render(.data(Data(Self.tiff(pages: 3, loopingTo: 1)), name: "loop.tif"),
                                     [TableFormat(width: 8, height: 8, style: .grayscale8)])
        #expect(report.source.loader.hasPrefix("tiffload") && report.warnings.contains { $0.contains("looping") }, "\(report.warnings)")
    }
}

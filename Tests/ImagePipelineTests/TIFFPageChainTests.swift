import Foundation
@testable import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// A TIFF with a long chain of pages is handed to libvips as its first page alone
/// (``TIFFStructure/firstPageOnly(_:)``): libvips 8.14 follows every page's directory first.
@Suite struct TIFFPageChainTests {
    /// A classic little-endian TIFF's directory of a 1×1 8-bit grey page whose strip is at
    /// `strip`, linking to `next`.
    static func page(strip: Int, next: Int) -> [UInt8] {
        func le(_ v: Int, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(v >> (8 * $0) & 0xFF) } }
        let entries: [(Int, Int, Int)] = [(256, 3, 1), (257, 3, 1), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, strip),
                                          (277, 3, 1), (278, 3, 1), (279, 4, 1)]
        return le(entries.count, 2) + entries.flatMap { le($0.0, 2) + le($0.1, 2) + le(1, 4) + le($0.2, 4) } + le(next, 4)
    }

    /// `tiff` (little-endian, one page) with `extra` 1×1 pages chained after its first, the
    /// last linking back to the first of them when `looping`.
    static func chained(_ tiff: [UInt8], extra: Int, looping: Bool = false) -> [UInt8] {
        var out = tiff + [0x80, 0]  // the extra pages' one strip
        let strip = tiff.count
        let first = Int(tiff[4]) | Int(tiff[5]) << 8 | Int(tiff[6]) << 16 | Int(tiff[7]) << 24
        let count = Int(tiff[first]) | Int(tiff[first + 1]) << 8
        let link = first + 2 + count * 12
        let size = page(strip: 0, next: 0).count
        let start = out.count
        for i in 0..<extra {
            let at = out.count
            if i == 0 { for k in 0..<4 { out[link + k] = UInt8(at >> (8 * k) & 0xFF) } }
            out += page(strip: strip, next: i == extra - 1 ? (looping ? start : 0) : at + size)
        }
        return out
    }

    static let formats = [TableFormat(width: 40, height: 40, style: .bgr32), TableFormat(width: 24, height: 16, style: .grayscale8)]

    static func renderBytes(_ bytes: [UInt8]) throws(ImageTableError) -> [[UInt8]] {
        try render(.data(Data(bytes), name: "pages.tif"), formats).1.map { Array($0.buffer) }
    }

    /// 20,000 pages after a photo's render exactly as the photo alone (libvips alone took about
    /// 0.8 s over them), and so do 65, the fewest that are cut; 64 are left whole, and render
    /// the same too.
    @Test func aLongChainRendersAsItsFirstPage() throws {
        let dir = try TemporaryDirectory()
        let tif = dir.file("photo.tif")
        try Reference.convert(Corpus.photo("Landscape_1"), to: dir.file("small.png"), maxSize: 90)
        try Reference.convert(dir.file("small.png"), to: tif)
        let photo = try [UInt8](Data(contentsOf: URL(fileURLWithPath: tif)))
        #expect(photo[0] == 0x49, "libvips writes little-endian TIFFs here")
        let alone = try Self.renderBytes(photo)
        for extra in [TIFFStructure.pagesKeptWhole - 1, TIFFStructure.pagesKeptWhole, 20_000] {
            let long = Self.chained(photo, extra: extra)
            let cut = long.withUnsafeBytes { TIFFStructure.firstPageOnly($0) }
            #expect((cut != nil) == (extra + 1 > TIFFStructure.pagesKeptWhole), "\(extra + 1) pages")
            #expect(try Self.renderBytes(long) == alone, "\(extra + 1) pages")
        }
        // A chain that loops back on itself is not followed past the cut: libtiff warned of the
        // loop ("TIFF directory 70 has IFD looping to directory 1"), reading pages no render draws.
        let looping = Self.chained(photo, extra: 70, looping: true)
        let (report, slots) = try render(.data(Data(looping), name: "pages.tif"), Self.formats)
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        #expect(slots.map { Array($0.buffer) } == alone)
    }

    /// Chains that cannot be followed are left to libvips whole, and a BigTIFF's is cut too.
    @Test func onlyChainsThatCanBeFollowedAreCut() {
        func cut(_ bytes: [UInt8]) -> [UInt8]? { bytes.withUnsafeBytes { TIFFStructure.firstPageOnly($0) } }
        let header: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        let size = Self.page(strip: 0, next: 0).count
        // 100 pages, each linking to the next.
        var pages = header
        for i in 0..<100 { pages += Self.page(strip: 0, next: i == 99 ? 0 : 8 + (i + 1) * size) }
        let whole = cut(pages)
        #expect(whole.map { Array($0[(8 + size - 4)..<(8 + size)]) } == [0, 0, 0, 0])
        #expect(whole.map { Array($0[(8 + size)...]) } == Array(pages[(8 + size)...]), "nothing else changes")
        // A link past the end within the first 64 pages, or a count running past it.
        var broken = pages
        broken[8 + 10 * size + size - 1] = 0x7F
        #expect(cut(broken) == nil)
        #expect(cut(Array(pages.prefix(8 + 30 * size + 5))) == nil)
        // A loop is followed 64 pages deep, then cut: libvips reads the first page alone.
        var loop = header + Self.page(strip: 0, next: 8 + size) + Self.page(strip: 0, next: 8)
        #expect(cut(loop).map { Array($0[(8 + size - 4)..<(8 + size)]) } == [0, 0, 0, 0])
        loop[2] = 41
        #expect(cut(loop) == nil, "not a TIFF")
        // A BigTIFF: 8-byte counts and links, 20-byte entries.
        func le(_ v: Int, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(v >> (8 * $0) & 0xFF) } }
        let bigPage = 8 + 20 + 8
        var big: [UInt8] = [0x49, 0x49, 43, 0, 8, 0, 0, 0] + le(16, 8)
        for i in 0..<70 { big += le(1, 8) + le(256, 2) + le(3, 2) + le(1, 8) + le(1, 8) + le(i == 69 ? 0 : 16 + (i + 1) * bigPage, 8) }
        #expect(cut(big).map { Array($0[(16 + bigPage - 8)..<(16 + bigPage)]) } == [UInt8](repeating: 0, count: 8))
        #expect(cut(Array(big.prefix(16 + 60 * bigPage))) == nil)
    }
}

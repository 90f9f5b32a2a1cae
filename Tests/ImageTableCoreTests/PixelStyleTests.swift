import Testing
import ImageTableCore

/// Each pixel style's description (size, alpha, header code) is the one FORMAT.md's "Pixel
/// styles" and header tables give: every property reads one description per style, so a style
/// described wrongly, or a property that stops reading it, fails here.
@Suite struct PixelStyleTests {
    /// FORMAT.md's styles: name, bytes per pixel, whether it keeps alpha, header code.
    static let documented: [(name: String, bytes: Int, alpha: Bool, code: UInt32)] = [
        ("32BitBGRA", 4, true, 1), ("32BitBGR", 4, false, 2), ("16BitBGR", 2, false, 3), ("8BitGrayscale", 1, false, 4),
    ]

    @Test func everyStyleIsDescribedAsDocumented() throws {
        #expect(PixelStyle.allCases.map(\.rawValue) == Self.documented.map(\.name))
        for row in Self.documented {
            let style = try #require(PixelStyle(rawValue: row.name))
            #expect(style.bytesPerPixel == row.bytes && style.hasAlpha == row.alpha && style.code == row.code, "\(row.name)")
            #expect(PixelStyle(code: row.code) == style, "the header code names \(row.name)")
        }
    }

    /// Only premultiplied BGRA keeps alpha; the three others are opaque, whatever way the style
    /// is reached (by name, by header code).
    @Test func onlyBGRAHasAlpha() {
        #expect(PixelStyle.allCases.filter(\.hasAlpha) == [.bgra32])
        #expect((0...5).compactMap { PixelStyle(code: $0) }.filter(\.hasAlpha).map(\.rawValue) == ["32BitBGRA"])
    }
}

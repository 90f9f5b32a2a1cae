import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

struct PixelConversionTests {
    /// One 2×1 entry per style with known bytes, converted to RGBA by FORMAT.md's rules.
    @Test(arguments: [
        (PixelStyle.bgra32, [UInt8]([0x10, 0x20, 0x40, 0x80, 0, 0, 0, 0]), [UInt8]([0x80, 0x40, 0x20, 0x80, 0, 0, 0, 0])),
        (.bgr32, [0x01, 0x02, 0x03, 0xFF, 0xAA, 0xBB, 0xCC, 0xFF], [0x03, 0x02, 0x01, 0xFF, 0xCC, 0xBB, 0xAA, 0xFF]),
        // 0x7C00 = pure red (R = 31), 0x03E0 = pure green; little-endian bytes.
        (.bgr16, [0x00, 0x7C, 0xE0, 0x03], [0xFF, 0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00, 0xFF]),
        (.grayscale8, [0x00, 0x7F], [0x00, 0x00, 0x00, 0xFF, 0x7F, 0x7F, 0x7F, 0xFF]),
    ])
    func convertsEveryStyle(style: PixelStyle, stored: [UInt8], rgba: [UInt8]) throws {
        let dir = try TemporaryDirectory()
        let table = try openTable(dir.file("t.imagetable"), descriptor(width: 2, height: 1, style: style))
        _ = try stored.withUnsafeBytes { try table.write(key: "k", sourceUUID: UUID(), pixels: $0, bytesPerRow: stored.count) }
        #expect(try table.withImage(forKey: "k") { PixelConversion.rgba8($0) } == rgba)
    }

    @Test func unpremultiplyRoundsAndWidenCoversTheRange() {
        #expect(PixelConversion.unpremultiply(1, 3) == 85)
        #expect(PixelConversion.unpremultiply(200, 200) == 255)
        #expect(PixelConversion.widen(0) == 0 && PixelConversion.widen(31) == 255 && PixelConversion.widen(16) == 132)
    }
}

import ImagePipeline
import ImageTableCore

/// An entry's pixels as a bitmap to encode, converted by `docs/FORMAT.md`'s rules
/// (`PixelConversion`): `32BitBGRA` becomes RGBA with straight alpha, `32BitBGR` and `16BitBGR`
/// RGB (5-bit channels widened), `8BitGrayscale` one grey band. The padding of rows is dropped.
enum EntryBitmaps {
    /// The bands an extracted PNG of `style` has.
    static func bands(for style: PixelStyle) -> Int {
        switch style {
        case .bgra32: 4
        case .bgr32, .bgr16: 3
        case .grayscale8: 1
        }
    }

    /// `view`'s pixels in the PNG layout of its style.
    ///
    /// - Parameters:
    ///   - view: the entry.
    ///   - region: the part to keep: the whole slot, or the entry's content rectangle.
    static func bitmap(_ view: ImageView, region: PixelRect) -> Bitmap {
        let rgba = PixelConversion.rgba8(view)
        let bands = bands(for: view.style)
        var out = [UInt8](repeating: 0, count: region.width * region.height * bands)
        out.withUnsafeMutableBufferPointer { o in
            rgba.withUnsafeBufferPointer { i in
                var n = 0
                for y in region.y..<(region.y + region.height) {
                    var p = (y * view.width + region.x) * 4
                    for _ in 0..<region.width {
                        for c in 0..<bands {
                            o[n] = i[p + c]
                            n += 1
                        }
                        p += 4
                    }
                }
            }
        }
        return Bitmap(width: region.width, height: region.height, bands: bands, pixels: out)
    }

    /// `view`'s pixels premultiplied RGBA: what the contact sheet resamples and composites.
    static func premultipliedRGBA(_ view: ImageView) -> Bitmap {
        var rgba = PixelConversion.rgba8(view)
        if view.style.hasAlpha {
            for i in stride(from: 0, to: rgba.count, by: 4) {
                let a = UInt32(rgba[i + 3])
                for c in 0..<3 { rgba[i + c] = UInt8((UInt32(rgba[i + c]) * a + 127) / 255) }
            }
        }
        return Bitmap(width: view.width, height: view.height, bands: 4, pixels: rgba)
    }

    /// Whether the slot's bytes still match the checksum its record holds.
    static func checksumHolds(_ view: ImageView, expected: UInt32) -> Bool {
        CRC32.checksum(view.bytes) == expected
    }
}

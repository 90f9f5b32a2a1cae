import ImageTableCore
import CVips

/// Plain text rendered by libvips (`vips_text`, Pango and fontconfig), for captions.
package enum TextRenderer {
    /// Whether this libvips can render text: it was built with Pango. Does not start libvips
    /// twice and does not render anything.
    package static var isAvailable: Bool {
        guard (try? PipelineRuntime.start()) != nil else { return false }
        return PipelineRuntime.libvipsLock.withLock { _ in cv_type_find("VipsOperation", "text") != 0 }
    }

    /// `text` as a one-band coverage mask: 0 where there is no ink, 255 where it is solid.
    ///
    /// Every line of text comes out the same height whatever its letters, so captions line up:
    /// the text is framed by two invisible full-height bars (U+2502 at alpha 1/65535), which
    /// set the ink extent Pango measures. The blank columns they leave at either side are cut
    /// off, so the width is the ink's. The text is escaped, never read as markup; control
    /// characters show as U+FFFD.
    ///
    /// - Parameters:
    ///   - text: plain text, one line.
    ///   - font: a Pango font description, such as `sans 9`.
    ///   - dpi: resolution; with 72 a point is a pixel.
    /// - Returns: the mask.
    /// - Throws: ``ImageTableError`` `libraryUnavailable` or `renderFailed` (no Pango, no fonts).
    package static func render(_ text: String, font: String, dpi: Int) throws(ImageTableError) -> Bitmap {
        try PipelineRuntime.start()
        let scope = VipsScope(sourceName: "caption")
        defer { scope.release() }
        let strut = "<span fgalpha=\"1\">\u{2502}</span>"
        let markup = strut + escaped(text) + strut
        let image = try scope.image("render text", .renderFailed) { cv_text($0, markup, font, Int32(dpi)) }
        return trimmed(try scope.bitmap("render text", of: image))
    }

    /// `mask` without its blank columns at the left and right (one column when all are blank).
    static func trimmed(_ mask: Bitmap) -> Bitmap {
        guard mask.bands == 1 else { return mask }
        let w = mask.width, h = mask.height
        func blank(_ x: Int) -> Bool { (0..<h).allSatisfy { mask.pixels[$0 * w + x] == 0 } }
        var left = 0, right = w - 1
        while left < right && blank(left) { left += 1 }
        while right > left && blank(right) { right -= 1 }
        let width = right - left + 1
        var pixels = [UInt8](repeating: 0, count: width * h)
        for y in 0..<h { pixels[(y * width)..<((y + 1) * width)] = mask.pixels[(y * w + left)..<(y * w + right + 1)] }
        return Bitmap(width: width, height: h, bands: 1, pixels: pixels)
    }

    /// `text` with Pango markup's five special characters escaped and control characters
    /// (which markup rejects) replaced.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

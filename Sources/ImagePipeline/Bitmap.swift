import ImageTableCore
import CVips

/// Eight-bit pixels in memory, rows packed without padding, channels interleaved: what
/// ``PNGEncoder`` encodes and what ``Resampler`` and ``TextRenderer`` produce.
///
/// Table slots are not bitmaps (their rows are padded and their styles packed); tools convert
/// an entry to one with `PixelConversion` first.
package struct Bitmap: Sendable, Equatable {
    /// Width in pixels.
    package let width: Int
    /// Height in pixels.
    package let height: Int
    /// Channels per pixel: 1 (grey or a coverage mask), 3 (RGB) or 4 (RGBA).
    package let bands: Int
    /// `width × height × bands` bytes, row after row.
    package var pixels: [UInt8]

    /// Wraps pixels.
    ///
    /// - Parameters:
    ///   - width: width in pixels, at least 1.
    ///   - height: height in pixels, at least 1.
    ///   - bands: 1, 3 or 4.
    ///   - pixels: exactly `width × height × bands` bytes.
    package init(width: Int, height: Int, bands: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "a bitmap has at least one pixel")
        precondition([1, 3, 4].contains(bands), "bands must be 1, 3 or 4")
        precondition(pixels.count == width * height * bands, "pixel count does not match the size")
        self.width = width
        self.height = height
        self.bands = bands
        self.pixels = pixels
    }

    /// A bitmap of one value in every byte.
    ///
    /// - Parameters:
    ///   - width: width in pixels.
    ///   - height: height in pixels.
    ///   - bands: 1, 3 or 4.
    ///   - value: the byte every channel holds.
    package init(width: Int, height: Int, bands: Int, filledWith value: UInt8) {
        self.init(width: width, height: height, bands: bands, pixels: [UInt8](repeating: value, count: width * height * bands))
    }
}

extension VipsScope {
    /// A libvips image holding a copy of `bitmap`, interpreted as grey (1 band) or sRGB.
    func image(copying bitmap: Bitmap) throws(ImageTableError) -> VImage {
        try image("wrap the pixels in an image", .invalidRequest, returning: {
            bitmap.pixels.withUnsafeBytes { raw in
                cv_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(bitmap.width), Int32(bitmap.height),
                                                Int32(bitmap.bands), CV_FORMAT_UCHAR)
            }
        })
    }

    /// The pixels of an 8-bit image as a bitmap, evaluated outside the global lock.
    func bitmap(_ step: String, of image: VImage) throws(ImageTableError) -> Bitmap {
        let width = image.width, height = image.height, bands = image.bands
        guard image.format == CV_FORMAT_UCHAR, [1, 3, 4].contains(bands) else {
            throw ImageTableError(.renderFailed, "could not \(step): libvips made \(bands) bands of format \(image.format.rawValue)",
                                path: sourceName)
        }
        let pixels = try withPixels(step, .renderFailed, of: image) { Array($0) }
        guard pixels.count == width * height * bands else {
            throw ImageTableError(.renderFailed, "could not \(step): libvips returned \(pixels.count) bytes", path: sourceName)
        }
        return Bitmap(width: width, height: height, bands: bands, pixels: pixels)
    }
}

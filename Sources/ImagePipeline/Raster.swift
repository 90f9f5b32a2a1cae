/// 8-bit pixels with interleaved channels (3: RGB, 4: premultiplied RGBA), rows packed
/// (`width × channels` bytes apart): the direct path's decoded image and its resized
/// intermediates.
///
/// The storage has `channels` spare bytes at its end, so the resampler may read a whole vector
/// at the last pixel.
package struct Raster {
    package let width: Int
    package let height: Int
    package let channels: Int
    package var bytes: [UInt8]

    /// A raster of zeros.
    package init(width: Int, height: Int, channels: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        bytes = [UInt8](repeating: 0, count: width * height * channels + channels)
    }

    /// A raster whose pixels the caller is about to write in full (the spare bytes are zero):
    /// no pass of zeros over memory that is overwritten at once.
    package init(uninitializedWidth width: Int, height: Int, channels: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        let count = width * height * channels
        bytes = [UInt8](unsafeUninitializedCapacity: count + channels) { buffer, initialized in
            (buffer.baseAddress! + count).initialize(repeating: 0, count: channels)
            initialized = count + channels
        }
    }

    package var rowBytes: Int { width * channels }

    /// The pixels of `window`, or the raster itself when the window is all of it.
    package func cropped(to window: Lanczos3.Window) -> Raster {
        if window.x == 0 && window.y == 0 && window.width == width && window.height == height { return self }
        var out = Raster(uninitializedWidth: window.width, height: window.height, channels: channels)
        let c = channels
        bytes.withUnsafeBufferPointer { src in
            out.bytes.withUnsafeMutableBufferPointer { dst in
                for y in 0..<window.height {
                    let from = src.baseAddress! + ((window.y + y) * width + window.x) * c
                    (dst.baseAddress! + y * window.width * c).update(from: from, count: window.width * c)
                }
            }
        }
        return out
    }

    /// The raster turned upright for EXIF `orientation` (1…8), as libvips' `autorot` turns it:
    /// 2 mirrors, 3 turns 180°, 4 flips, 5 transposes, 6 turns 90° clockwise, 7 transverses,
    /// 8 turns 90° anticlockwise.
    package func upright(orientation: Int) -> Raster {
        guard orientation >= 2 && orientation <= 8 else { return self }
        let swaps = orientation >= 5
        var out = Raster(uninitializedWidth: swaps ? height : width, height: swaps ? width : height, channels: channels)
        let c = channels, w = width, h = height, ow = out.width
        bytes.withUnsafeBufferPointer { src in
            out.bytes.withUnsafeMutableBufferPointer { dst in
                for oy in 0..<out.height {
                    for ox in 0..<ow {
                        // The stored pixel that lands at (ox, oy) once upright.
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (w - 1 - ox, oy)
                        case 3: (sx, sy) = (w - 1 - ox, h - 1 - oy)
                        case 4: (sx, sy) = (ox, h - 1 - oy)
                        case 5: (sx, sy) = (oy, ox)
                        case 6: (sx, sy) = (oy, h - 1 - ox)
                        case 7: (sx, sy) = (w - 1 - oy, h - 1 - ox)
                        default: (sx, sy) = (w - 1 - oy, ox)
                        }
                        let s = (sy * w + sx) * c, d = (oy * ow + ox) * c
                        for k in 0..<c { dst[d + k] = src[s + k] }
                    }
                }
            }
        }
        return out
    }
}

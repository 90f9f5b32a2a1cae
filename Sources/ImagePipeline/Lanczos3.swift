import CPixels
import Foundation
import Synchronization

/// Separable Lanczos-3 resampling of 8-bit rasters, the direct path's resizer: vertical pass
/// first (whole rows, so it vectorises across a row), then horizontal, in fixed point
/// (`CPixels`: 14-bit weights, an intermediate with 6 fractional bits, rounded once to 8 bits
/// at the end, where libvips rounds after each pass).
///
/// Output pixel `i` is centred on source position `(i + 0.5 − out / 2) / scale + in / 2 − 0.5`
/// (the two grids share their centre; `in` is the source's extent, its width or height unless
/// told otherwise); when shrinking, the
/// kernel is stretched by `1 / scale` (a low-pass filter as wide as the pixels it averages), and
/// taps that would fall outside the image are dropped and the rest renormalised, so edges keep
/// their brightness. Channels are filtered independently: premultiply RGBA first.
package enum Lanczos3 {
    /// A rectangle of the resized image, in its pixels.
    package struct Window: Equatable, Sendable {
        package var x, y, width, height: Int

        package init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }
    }

    /// `source` resized to `width` × `height` at `scaleX`, `scaleY` (output pixels per source
    /// pixel, normally `width / source.width`; given separately so a size rounded to whole pixels
    /// does not change the scale), or only the `window` of that result: a member cropped from
    /// its group costs only the pixels it keeps, and only the source columns and rows under
    /// their taps are filtered. `extent` is how far the image reaches in `source`'s pixels, when
    /// not its size (``Taps/init(inSize:outSize:scale:extent:)``).
    package static func resize(_ source: Raster, width: Int, height: Int, scaleX: Double, scaleY: Double,
                               extent: (x: Double, y: Double)? = nil, window: Window? = nil) -> Raster {
        let win = window ?? Window(x: 0, y: 0, width: width, height: height)
        precondition(win.x >= 0 && win.y >= 0 && win.width > 0 && win.height > 0 && win.x + win.width <= width
                     && win.y + win.height <= height, "window \(win) outside \(width)×\(height)")
        let rows = Taps.shared(inSize: source.height, outSize: height, scale: scaleY, extent: extent?.y)
        let columns = Taps.shared(inSize: source.width, outSize: width, scale: scaleX, extent: extent?.x)
        let c = source.channels
        // The source columns under the window's taps (starts grow with the output index).
        let firstColumn = Int(columns.start[win.x])
        var endColumn = firstColumn
        for i in win.x..<(win.x + win.width) { endColumn = max(endColumn, Int(columns.start[i] + columns.count[i])) }
        let midRow = (endColumn - firstColumn) * c
        // Slack past the last row: the horizontal pass reads whole vectors, up to a tap row's
        // width past a pixel's first tap (`CPixels.h`).
        let slack = (columns.width + 3) * c + 16
        let mid = UnsafeMutableBufferPointer<Int16>.allocate(capacity: win.height * midRow + slack)
        defer { mid.deallocate() }
        mid.baseAddress!.advanced(by: win.height * midRow).initialize(repeating: 0, count: slack)
        var out = Raster(uninitializedWidth: win.width, height: win.height, channels: c)
        source.bytes.withUnsafeBufferPointer { src in
            rows.weights.withUnsafeBufferPointer { weights in
                for y in 0..<win.height {
                    let r = win.y + y
                    cresample_vertical(src.baseAddress! + Int(rows.start[r]) * source.rowBytes + firstColumn * c, source.rowBytes,
                                       weights.baseAddress! + r * rows.width, max(1, rows.count[r]), mid.baseAddress! + y * midRow, Int32(midRow))
                }
            }
            columns.start.withUnsafeBufferPointer { start in
                columns.count.withUnsafeBufferPointer { count in
                    columns.weights.withUnsafeBufferPointer { weights in
                        out.bytes.withUnsafeMutableBufferPointer { dst in
                            cresample_horizontal_rows(mid.baseAddress!, midRow, Int32(win.height), Int32(c), start.baseAddress!,
                                                      count.baseAddress!, weights.baseAddress!, Int32(columns.width),
                                                      Int32(firstColumn), Int32(win.x), Int32(win.width), dst.baseAddress!,
                                                      win.width * c)
                        }
                    }
                }
            }
        }
        return out
    }

    static func kernel(_ x: Double) -> Double {
        let x = abs(x)
        guard x < 3 else { return 0 }
        guard x > 1e-9 else { return 1 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Each output pixel's first source index, tap count and weights (in 14-bit fixed point,
    /// summing to exactly 1 so flat areas stay exact), on a grid `width` weights wide, even and
    /// zero past each count (the vector loops take taps two at a time).
    final class Taps: Sendable {
        let start: [Int32]
        let count: [Int32]
        let weights: [Int16]
        let width: Int

        private struct Key: Hashable {
            var inSize: Int
            var outSize: Int
            var scale: UInt64
            var extent: UInt64
        }

        /// The last few hundred tap sets: a bake's sources often share their sizes, and two sines
        /// per weight cost as much as filtering a small image.
        private static let cache = Mutex<[Key: Taps]>([:])

        static func shared(inSize: Int, outSize: Int, scale: Double, extent: Double? = nil) -> Taps {
            let extent = extent ?? Double(inSize)
            let key = Key(inSize: inSize, outSize: outSize, scale: scale.bitPattern, extent: extent.bitPattern)
            if let taps = cache.withLock({ $0[key] }) { return taps }
            let taps = Taps(inSize: inSize, outSize: outSize, scale: scale, extent: extent)
            cache.withLock { cache in
                if cache.count >= 256 { cache.removeAll(keepingCapacity: true) }
                cache[key] = taps
            }
            return taps
        }

        /// - Parameters:
        ///   - inSize: the source's pixels along the axis.
        ///   - outSize: the output's.
        ///   - scale: output pixels per source pixel.
        ///   - extent: how far the image the source holds reaches, in source pixels: `inSize`,
        ///     but for a decode at a DCT scale of a side that is not a multiple of it (1601
        ///     pixels at 1/8: 200.125 of the 201 decoded, the last covering an eighth of a block).
        init(inSize: Int, outSize: Int, scale: Double, extent: Double? = nil) {
            let extent = extent ?? Double(inSize)
            let stretch = max(1, 1 / scale)
            let support = 3 * stretch
            let width = (Int((2 * support).rounded(.up)) + 3) & ~1
            var start: [Int32] = [], count: [Int32] = []
            var weights = [Int16](repeating: 0, count: outSize * width)
            start.reserveCapacity(outSize)
            count.reserveCapacity(outSize)
            var w: [Double] = []
            for i in 0..<outSize {
                // Grids aligned on their centres, as libvips' reduce aligns them: a size rounded
                // to whole pixels splits its excess between both edges instead of shifting the
                // image by up to half of it. A decode at a DCT scale starts where the image does,
                // and its last pixel may cover only part of a block: centred on the decoded
                // pixels, the image was drawn up to half a decoded pixel up and left.
                let centre = (Double(i) + 0.5 - Double(outSize) / 2) / scale + extent / 2 - 0.5
                let first = max(0, Int((centre - support).rounded(.up)))
                let last = min(inSize - 1, Int((centre + support).rounded(.down)))
                w.removeAll(keepingCapacity: true)
                if first <= last {
                    for k in first...last { w.append(Lanczos3.kernel((Double(k) - centre) / stretch)) }
                }
                var total = w.reduce(0, +)
                var from = first
                if w.isEmpty || abs(total) < 1e-9 {
                    // Far outside the image (only for extreme rounding): take the nearest pixel.
                    w = [1]
                    total = 1
                    from = min(max(Int(centre.rounded()), 0), inSize - 1)
                }
                start.append(Int32(from))
                count.append(Int32(min(w.count, width)))
                let one = 1 << Int(CRESAMPLE_WEIGHT_BITS)
                let fixed = w.prefix(width).map { Int(($0 / total * Double(one)).rounded()) }
                // Rounding leaves the sum a unit or two off 1: the largest tap takes the rest.
                let largest = fixed.indices.max { abs(fixed[$0]) < abs(fixed[$1]) }!
                for (k, v) in fixed.enumerated() {
                    weights[i * width + k] = Int16(k == largest ? v + one - fixed.reduce(0, +) : v)
                }
            }
            (self.start, self.count, self.weights, self.width) = (start, count, weights, width)
        }
    }
}

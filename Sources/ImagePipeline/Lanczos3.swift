import Foundation
import Synchronization

/// Separable Lanczos-3 resampling of 8-bit rasters, the direct path's resizer: vertical pass
/// first (whole rows, so it vectorises across a row), into 32-bit floats, then horizontal, rounded
/// once to 8 bits at the end (libvips rounds after each pass).
///
/// Output pixel `i` is centred on source position `(i + 0.5 − out / 2) / scale + in / 2 − 0.5`
/// (the two grids share their centre); when shrinking, the
/// kernel is stretched by `1 / scale` (a low-pass filter as wide as the pixels it averages), and
/// taps that would fall outside the image are dropped and the rest renormalised, so edges keep
/// their brightness. Channels are filtered independently: premultiply RGBA first.
package enum Lanczos3 {
    /// `source` resized to `width` × `height` at `scaleX`, `scaleY` (output pixels per source
    /// pixel, normally `width / source.width`; given separately so a size rounded to whole pixels
    /// does not change the scale).
    package static func resize(_ source: Raster, width: Int, height: Int, scaleX: Double, scaleY: Double) -> Raster {
        let rows = Taps.shared(inSize: source.height, outSize: height, scale: scaleY)
        let columns = Taps.shared(inSize: source.width, outSize: width, scale: scaleX)
        let c = source.channels
        let rowFloats = source.width * c
        // The vertical pass's output, plus slack for the horizontal pass's loads: a vector at the
        // last pixel, and the zero-weight taps a pixel runs when its neighbour has one more.
        var vertical = [Float](repeating: 0, count: height * rowFloats + (columns.width + 2) * c + 4)
        var out = Raster(width: width, height: height, channels: c)
        source.bytes.withUnsafeBufferPointer { src in
            vertical.withUnsafeMutableBufferPointer { mid in
                for y in 0..<height {
                    verticalRow(src.baseAddress!, rowBytes: rowFloats, taps: rows, output: y, into: mid.baseAddress! + y * rowFloats)
                }
                out.bytes.withUnsafeMutableBufferPointer { dst in
                    for y in 0..<height {
                        horizontalRow(mid.baseAddress! + y * rowFloats, channels: c, taps: columns,
                                      into: dst.baseAddress! + y * width * c)
                    }
                }
            }
        }
        return out
    }

    /// One output row of the vertical pass: the weighted sum of the source rows under its taps.
    /// Plain loops over a row, which the compiler vectorises, four taps per pass so the row of
    /// sums is loaded and stored once per four taps. (The SIMD types' generic conversions, and
    /// `addingProduct`, a call to `fmaf` per lane without FMA hardware, are far slower.)
    private static func verticalRow(_ src: UnsafePointer<UInt8>, rowBytes n: Int, taps: Taps, output y: Int,
                                    into row: UnsafeMutablePointer<Float>) {
        let start = Int(taps.start[y]), base = y * taps.width, count = max(1, Int(taps.count[y]))
        taps.weights.withUnsafeBufferPointer { weights in
            let w = weights.baseAddress! + base
            let l0 = src + start * n
            for x in 0..<n { row[x] = 0 }
            var k = 0
            while k + 4 <= count {
                let a = l0 + k * n, b = a + n, c = b + n, d = c + n
                let (wa, wb, wc, wd) = (w[k], w[k + 1], w[k + 2], w[k + 3])
                for x in 0..<n { row[x] += Float(a[x]) * wa + Float(b[x]) * wb + Float(c[x]) * wc + Float(d[x]) * wd }
                k += 4
            }
            while k + 2 <= count {
                let a = l0 + k * n, b = a + n
                let (wa, wb) = (w[k], w[k + 1])
                for x in 0..<n { row[x] += Float(a[x]) * wa + Float(b[x]) * wb }
                k += 2
            }
            if k < count {
                let a = l0 + k * n, wa = w[k]
                for x in 0..<n { row[x] += Float(a[x]) * wa }
            }
        }
    }

    /// One row of the horizontal pass, rounded to 8 bits: a 4-lane vector per pixel (RGB uses
    /// three lanes; the fourth reads the next pixel's first channel and is discarded), two output
    /// pixels at a time so that two chains of additions overlap. Only the vector operators,
    /// which map to single instructions. Weights past a pixel's own taps are zero, so both
    /// pixels run the longer of their two tap counts.
    private static func horizontalRow(_ row: UnsafePointer<Float>, channels c: Int, taps: Taps, into out: UnsafeMutablePointer<UInt8>) {
        let count = taps.start.count
        taps.weights.withUnsafeBufferPointer { weights in
            @inline(__always) func store(_ acc: SIMD4<Float>, _ x: Int) {
                let o = out + x * c
                o[0] = byte(acc[0])
                o[1] = byte(acc[1])
                o[2] = byte(acc[2])
                if c == 4 { o[3] = byte(acc[3]) }
            }
            let stride = c * MemoryLayout<Float>.size
            var x = 0
            while x < count {
                let pair = x + 1 < count
                let y = pair ? x + 1 : x
                var w0 = weights.baseAddress! + x * taps.width, w1 = weights.baseAddress! + y * taps.width
                var p0 = UnsafeRawPointer(row + Int(taps.start[x]) * c), p1 = UnsafeRawPointer(row + Int(taps.start[y]) * c)
                var a0 = SIMD4<Float>(), a1 = SIMD4<Float>()
                for _ in 0..<Int(max(taps.count[x], taps.count[y])) {
                    a0 = a0 + p0.loadUnaligned(as: SIMD4<Float>.self) * SIMD4(repeating: w0.pointee)
                    a1 = a1 + p1.loadUnaligned(as: SIMD4<Float>.self) * SIMD4(repeating: w1.pointee)
                    p0 += stride
                    p1 += stride
                    w0 += 1
                    w1 += 1
                }
                store(a0, x)
                if pair { store(a1, y) }
                x += 2
            }
        }
    }

    /// `v` rounded to the nearest integer (ties to even) and clamped to 0…255. Adding 1.5 × 2²³
    /// leaves `v`'s integer part in the float's low mantissa bits (exact for |v| < 2²²), so no
    /// float-to-integer conversion runs: `UInt8(v)` checks for overflow and NaN on every
    /// channel and cost more than the filtering.
    @inline(__always) static func byte(_ v: Float) -> UInt8 {
        UInt8(clamping: Int32(bitPattern: (v + 12_582_912).bitPattern) &- 0x4B40_0000)
    }

    static func kernel(_ x: Double) -> Double {
        let x = abs(x)
        guard x < 3 else { return 0 }
        guard x > 1e-9 else { return 1 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Each output pixel's first source index, tap count and weights (normalised to sum 1), on a
    /// grid `width` weights wide.
    final class Taps: Sendable {
        let start: [Int32]
        let count: [Int32]
        let weights: [Float]
        let width: Int

        private struct Key: Hashable {
            var inSize: Int
            var outSize: Int
            var scale: UInt64
        }

        /// The last few hundred tap sets: a bake's sources often share their sizes, and two sines
        /// per weight cost as much as filtering a small image.
        private static let cache = Mutex<[Key: Taps]>([:])

        static func shared(inSize: Int, outSize: Int, scale: Double) -> Taps {
            let key = Key(inSize: inSize, outSize: outSize, scale: scale.bitPattern)
            if let taps = cache.withLock({ $0[key] }) { return taps }
            let taps = Taps(inSize: inSize, outSize: outSize, scale: scale)
            cache.withLock { cache in
                if cache.count >= 256 { cache.removeAll(keepingCapacity: true) }
                cache[key] = taps
            }
            return taps
        }

        init(inSize: Int, outSize: Int, scale: Double) {
            let stretch = max(1, 1 / scale)
            let support = 3 * stretch
            let width = Int((2 * support).rounded(.up)) + 2
            var start: [Int32] = [], count: [Int32] = []
            var weights = [Float](repeating: 0, count: outSize * width)
            start.reserveCapacity(outSize)
            count.reserveCapacity(outSize)
            var w: [Double] = []
            for i in 0..<outSize {
                // Grids aligned on their centres, as libvips' reduce aligns them: a size rounded
                // to whole pixels splits its excess between both edges instead of shifting the
                // image by up to half of it.
                let centre = (Double(i) + 0.5 - Double(outSize) / 2) / scale + Double(inSize) / 2 - 0.5
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
                for (k, v) in w.prefix(width).enumerated() { weights[i * width + k] = Float(v / total) }
            }
            (self.start, self.count, self.weights, self.width) = (start, count, weights, width)
        }
    }
}

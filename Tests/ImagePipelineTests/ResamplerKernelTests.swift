import CPixels
import Foundation
@testable import ImagePipeline
import ImageTableCore
import Testing

/// The fixed-point resampling loops: the vector versions the CPU runs equal the plain C reference
/// on every shape they meet (lengths around the vector widths, odd tap counts, negative lobes,
/// three and four channels), and a window of a resize is exactly that part of the whole resize.
@Suite struct ResamplerKernelTests {
    /// Weights like Lanczos-3's: a positive centre, negative lobes, summing to 1 << 14.
    static func weights(_ count: Int, seed: inout UInt64) -> [Int16] {
        var w = (0..<count).map { _ in Int16(Int(next(&seed) % 1600) - 600) }
        w[count / 2] = 0
        w[count / 2] = Int16(16384 - w.reduce(0) { $0 + Int($1) })
        return w
    }

    static func next(_ state: inout UInt64) -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }

    /// Every level of the vertical loop this CPU runs (AVX2, and AVX-512 where there is VNNI),
    /// and the one it picks, at lengths around both vector widths.
    @Test(arguments: [CPIXELS_AVX2, CPIXELS_AVX512, -1])
    func theVerticalPassEqualsTheReference(level: Int32) {
        guard level <= cpixels_cpu_level() else { return }
        var seed: UInt64 = 7
        for n in [1, 15, 16, 31, 32, 33, 63, 64, 65, 95, 127, 128, 129, 705, 990] {
            for count in [1, 2, 3, 9, 16, 17] {
                let stride = n + 7
                let src = (0..<(stride * count)).map { _ in UInt8(truncatingIfNeeded: Self.next(&seed)) }
                let w = Self.weights(count, seed: &seed)
                var fast = [Int16](repeating: 0, count: n), slow = [Int16](repeating: 0, count: n)
                if level < 0 {
                    cresample_vertical(src, stride, w, Int32(count), &fast, Int32(n))
                } else {
                    cresample_vertical_at(level, src, stride, w, Int32(count), &fast, Int32(n))
                }
                cresample_vertical_portable(src, stride, w, Int32(count), &slow, Int32(n))
                #expect(fast == slow, "level \(level), n \(n), \(count) taps")
            }
        }
    }

    @Test(arguments: [3, 4])
    func theHorizontalPassEqualsTheReference(channels: Int) {
        var seed: UInt64 = 11
        for taps in [1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 41] {
            let width = (taps + 3) & ~1
            let outCount = 37, inPixels = 60 + taps
            let start = (0..<outCount).map { Int32($0 * (inPixels - taps) / outCount) }
            let count = (0..<outCount).map { i in Int32(max(1, taps - i % 2)) }
            var weights = [Int16](repeating: 0, count: outCount * width + 8)
            for i in 0..<outCount {
                for (k, v) in Self.weights(Int(count[i]), seed: &seed).enumerated() { weights[i * width + k] = v }
            }
            // Intermediate values as the vertical pass makes them: 0…255 with 6 fractional bits, ringing past both ends.
            let row = (0..<((inPixels + width + 3) * channels + 16)).map { _ in Int16(Int(Self.next(&seed) % 20_000) - 2_000) }
            var fast = [UInt8](repeating: 0, count: outCount * channels), slow = fast
            cresample_horizontal(row, Int32(channels), start, count, weights, Int32(width), 0, 0, Int32(outCount), &fast)
            cresample_horizontal_portable(row, Int32(channels), start, count, weights, Int32(width), 0, 0, Int32(outCount), &slow)
            #expect(fast == slow, "\(taps) taps, \(channels) channels")
        }
    }

    /// The whole-image horizontal pass (sixteen rows at a time, turned on their side, with AVX2)
    /// equals the reference row by row: row counts and row lengths around sixteen, odd tap
    /// counts, a window that starts past the first pixel, and output rows with padding between.
    /// Every level this CPU runs (AVX2's sixteen rows, AVX-512's thirty-two) and the one it picks.
    @Test(arguments: [3, 4], [CPIXELS_AVX2, CPIXELS_AVX512, -1])
    func theHorizontalPassOverRowsEqualsTheReference(channels: Int, level: Int32) {
        guard level <= cpixels_cpu_level() else { return }
        var seed: UInt64 = 23
        for (rows, outCount, taps) in [(1, 20, 9), (15, 37, 9), (16, 6, 10), (16, 37, 3), (17, 5, 1), (33, 37, 17),
                                       (150, 150, 10), (47, 90, 25), (16, 4, 41), (31, 20, 9), (32, 6, 10), (32, 37, 3),
                                       (64, 16, 9), (65, 37, 4)] {
            let width = (taps + 3) & ~1
            let inPixels = max(outCount, 6) * 3 / 2 + taps
            let start = (0..<outCount).map { Int32($0 * (inPixels - taps) / outCount) }
            let count = (0..<outCount).map { i in Int32(max(1, taps - i % 2)) }
            var weights = [Int16](repeating: 0, count: outCount * width + 8)
            for i in 0..<outCount {
                for (k, v) in Self.weights(Int(count[i]), seed: &seed).enumerated() { weights[i * width + k] = v }
            }
            let midRow = inPixels * channels
            let mid = (0..<(rows * midRow + (width + 3) * channels + 16)).map { _ in Int16(Int(Self.next(&seed) % 20_000) - 2_000) }
            // A window: output pixels `first` … from the pixel `base` of the intermediate on.
            for first in [0, outCount / 3] {
                let base = Int(start[first]), n = outCount - first
                let outStride = n * channels + 5
                var fast = [UInt8](repeating: 0xAB, count: rows * outStride), slow = fast
                if level < 0 {
                    cresample_horizontal_rows(mid, midRow - base * channels, Int32(rows), Int32(channels), start, count, weights,
                                              Int32(width), Int32(base), Int32(first), Int32(n), &fast, outStride)
                } else {
                    cresample_horizontal_rows_at(level, mid, midRow - base * channels, Int32(rows), Int32(channels), start, count,
                                                 weights, Int32(width), Int32(base), Int32(first), Int32(n), &fast, outStride)
                }
                cresample_horizontal_rows_portable(mid, midRow - base * channels, Int32(rows), Int32(channels), start, count,
                                                   weights, Int32(width), Int32(base), Int32(first), Int32(n), &slow, outStride)
                #expect(fast == slow, "level \(level): \(rows) rows, \(outCount) pixels from \(first), \(taps) taps, \(channels) channels")
                #expect(slow.enumerated().allSatisfy { $0.offset % outStride < n * channels || $0.element == 0xAB },
                        "padding between rows untouched")
            }
        }
    }

    /// Any window of a resize equals the same pixels of the whole resize, byte for byte.
    @Test func aWindowIsThatPartOfTheWholeResize() {
        let photo = ResamplerTests.raster(330, 225) { x, y, c in UInt8(truncatingIfNeeded: x * 7 + y * 13 + c * 50 + (x * y) % 17) }
        let whole = Lanczos3.resize(photo, width: 220, height: 150, scaleX: 220.0 / 330, scaleY: 150.0 / 225)
        for window in [Lanczos3.Window(x: 35, y: 0, width: 150, height: 150), .init(x: 0, y: 0, width: 1, height: 1),
                       .init(x: 219, y: 149, width: 1, height: 1), .init(x: 3, y: 40, width: 101, height: 7)] {
            let part = Lanczos3.resize(photo, width: 220, height: 150, scaleX: 220.0 / 330, scaleY: 150.0 / 225, window: window)
            #expect((part.width, part.height) == (window.width, window.height))
            var expected: [UInt8] = []
            for y in window.y..<(window.y + window.height) {
                expected += whole.bytes[((y * 220 + window.x) * 3)..<((y * 220 + window.x + window.width) * 3)]
            }
            #expect(Array(part.bytes.prefix(expected.count)) == expected, "window \(window)")
        }
    }

    /// For every EXIF orientation and both parities of the margin, resizing only the stored
    /// window of a centre crop, then turning it upright, gives the very bytes of turning the whole
    /// resize upright and cropping its centre.
    @Test func theStoredWindowOfACentreCropIsThatCrop() {
        let photo = ResamplerTests.raster(97, 61) { x, y, c in UInt8(truncatingIfNeeded: x * 5 + y * 11 + c * 70) }
        for orientation in 1...8 {
            for (w, h, cw, ch) in [(48, 30, 30, 30), (47, 31, 30, 30), (47, 30, 13, 30), (40, 31, 40, 8)] {
                let swaps = orientation >= 5
                let (uw, uh) = swaps ? (h, w) : (w, h)
                guard cw <= uw, ch <= uh else { continue }
                let whole = Lanczos3.resize(photo, width: w, height: h, scaleX: Double(w) / 97, scaleY: Double(h) / 61).upright(orientation: orientation)
                let expected = whole.cropped(to: .init(x: (uw - cw) / 2, y: (uh - ch) / 2, width: cw, height: ch))
                let window = DirectJPEG.storedCrop(width: w, height: h, contentWidth: cw, contentHeight: ch, orientation: orientation)
                let part = Lanczos3.resize(photo, width: w, height: h, scaleX: Double(w) / 97, scaleY: Double(h) / 61, window: window)
                    .upright(orientation: orientation)
                #expect(part.bytes == expected.bytes, "orientation \(orientation), \(w)×\(h) → \(cw)×\(ch)")
            }
        }
    }

    /// The packing loops, vector and plain, store exactly what the styles of FORMAT.md say, for
    /// every value of every channel (the tests of `StyleTests` pin the formulas themselves).
    @Test(arguments: PixelStyle.allCases)
    func packingEqualsTheStyleFormulas(style: PixelStyle) {
        // Every byte in each channel position, at lengths around the vector widths.
        var rgb: [UInt8] = []
        for v in 0..<256 { rgb += [UInt8(v), UInt8(255 - v), UInt8((v * 7) & 255)] }
        for n in [1, 5, 31, 32, 33, 256] {
            var fast = [UInt8](repeating: 0xEE, count: n * style.bytesPerPixel), slow = fast
            cpixels_pack_rgb(rgb, Int32(n), Int32(style.code), &fast)
            cpixels_pack_rgb_portable(rgb, Int32(n), Int32(style.code), &slow)
            var expected: [UInt8] = []
            for i in 0..<n {
                let (r, g, b) = (UInt32(rgb[3 * i]), UInt32(rgb[3 * i + 1]), UInt32(rgb[3 * i + 2]))
                switch style {
                case .bgra32, .bgr32: expected += [UInt8(b), UInt8(g), UInt8(r), 255]
                case .bgr16:
                    let v = UInt16((r * 31 + 127) / 255) << 10 | UInt16((g * 31 + 127) / 255) << 5 | UInt16((b * 31 + 127) / 255)
                    expected += [UInt8(v & 0xFF), UInt8(v >> 8)]
                case .grayscale8: expected.append(UInt8((77 * r + 150 * g + 29 * b + 128) >> 8))
                }
            }
            #expect(fast == expected && slow == expected, "\(style), \(n) pixels")
        }
    }
}

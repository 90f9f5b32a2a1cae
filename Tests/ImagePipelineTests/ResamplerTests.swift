import Foundation
import ImagePipeline
import Testing

/// The direct path's own parts: the Lanczos-3 resampler, the upright turn, the EXIF reader.
@Suite struct ResamplerTests {
    static func raster(_ width: Int, _ height: Int, channels: Int = 3, _ value: (Int, Int, Int) -> UInt8) -> Raster {
        var r = Raster(width: width, height: height, channels: channels)
        for y in 0..<height { for x in 0..<width { for c in 0..<channels { r.bytes[(y * width + x) * channels + c] = value(x, y, c) } } }
        return r
    }

    /// A flat image stays flat at any scale, edges included: the weights are renormalised where
    /// taps fall outside the image, so borders do not darken.
    @Test(arguments: [(997, 661, 150, 99), (330, 225, 220, 150), (40, 30, 120, 90), (5, 3, 1, 1)])
    func aFlatImageStaysFlat(size: (Int, Int, Int, Int)) {
        let flat = Self.raster(size.0, size.1) { _, _, c in UInt8(60 + 70 * c) }
        let out = Lanczos3.resize(flat, width: size.2, height: size.3, scaleX: Double(size.2) / Double(size.0),
                                  scaleY: Double(size.3) / Double(size.1))
        #expect((out.width, out.height) == (size.2, size.3))
        let wrong = (0..<size.2 * size.3 * 3).filter { out.bytes[$0] != UInt8(60 + 70 * ($0 % 3)) }
        #expect(wrong.isEmpty, "\(wrong.count) values differ, first at \(wrong.first ?? -1)")
    }

    /// The grids share their centre: a left-right symmetric image stays symmetric even when the
    /// output size is rounded (a grid anchored at the left edge shifts the image sideways).
    @Test func aSymmetricImageStaysSymmetric() {
        let ramp = Self.raster(1800, 8) { x, _, _ in UInt8(min(x, 1799 - x) * 255 / 900) }
        let out = Lanczos3.resize(ramp, width: 100, height: 1, scaleX: 100.0 / 1800 * 1.05, scaleY: 1.0 / 8)
        let row = (0..<100).map { Int(out.bytes[$0 * 3]) }
        #expect(zip(row, row.reversed()).allSatisfy { abs($0 - $1) <= 1 }, "\(row)")
    }

    /// A step edge resized keeps its place (within a pixel) and the kernel's ringing is clamped.
    @Test func aStepKeepsItsPlaceAndStaysInRange() {
        let step = Self.raster(400, 4) { x, _, _ in x < 200 ? 0 : 255 }
        let out = Lanczos3.resize(step, width: 100, height: 1, scaleX: 0.25, scaleY: 0.25)
        let row = (0..<100).map { Int(out.bytes[$0 * 3]) }
        #expect(row[..<48].allSatisfy { $0 <= 2 } && row[52...].allSatisfy { $0 >= 253 }, "\(row)")
        #expect(abs(row[49] + row[50] - 255) <= 20, "the edge is centred between 49 and 50: \(row[46..<54])")
    }

    /// `upright` maps each EXIF orientation like libvips' autorot: the pixel that is stored at
    /// (0, 0) lands where the orientation says the top-left corner of the photo was.
    @Test func uprightTurnsEveryOrientation() {
        let stored = Self.raster(3, 2, channels: 1) { x, y, _ in UInt8(10 * y + x) }  // [0 1 2 / 10 11 12]
        let expected: [Int: [UInt8]] = [
            1: [0, 1, 2, 10, 11, 12], 2: [2, 1, 0, 12, 11, 10], 3: [12, 11, 10, 2, 1, 0], 4: [10, 11, 12, 0, 1, 2],
            5: [0, 10, 1, 11, 2, 12], 6: [10, 0, 11, 1, 12, 2], 7: [12, 2, 11, 1, 10, 0], 8: [2, 12, 1, 11, 0, 10],
        ]
        for (orientation, pixels) in expected {
            let upright = stored.upright(orientation: orientation)
            #expect((upright.width, upright.height) == (orientation >= 5 ? (2, 3) : (3, 2)))
            #expect(Array(upright.bytes.prefix(6)) == pixels, "orientation \(orientation)")
        }
    }

    static func exif(bigEndian: Bool, type: UInt16, count: UInt32, value: UInt32, entries: UInt16 = 1) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        let packed = type == 3 || type == 8 ? u16(UInt16(truncatingIfNeeded: value)) + [0, 0] : u32(value)
        return exif(bigEndian: bigEndian, type: type, count: count, stored: packed, entries: entries)
    }

    /// An EXIF payload whose IFD0 holds the orientation tag with `stored`, the entry's four
    /// value bytes as they lie in the file.
    static func exif(bigEndian: Bool, type: UInt16, count: UInt32, stored: [UInt8], entries: UInt16 = 1) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) : u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) }
        return Array("Exif\0\0".utf8) + (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(8)
            + u16(entries) + u16(0x0112) + u16(type) + u32(count) + stored
    }

    /// The orientation tag in either byte order and every integer type libexif turns into one;
    /// anything malformed or out of range is orientation 1, as `vipsheader -f orientation` reads
    /// such files (values 9, 255 and 65535 were clamped to 8 and the image turned a quarter).
    @Test func exifOrientationIsReadAsLibvipsReadsIt() {
        func parse(_ bytes: [UInt8]) -> Int { bytes.withUnsafeBytes { ExifOrientation.parse($0) } }
        for big in [false, true] {
            for type: UInt16 in [3, 4, 8, 9] {
                for v: UInt32 in 1...8 { #expect(parse(Self.exif(bigEndian: big, type: type, count: 1, value: v)) == Int(v)) }
            }
            for v: UInt32 in [0, 9, 255, 65535] { #expect(parse(Self.exif(bigEndian: big, type: 3, count: 1, value: v)) == 1, "\(v)") }
            #expect(parse(Self.exif(bigEndian: big, type: 8, count: 1, value: 0xFFFF_FFFF)) == 1, "SSHORT -1")
            #expect(parse(Self.exif(bigEndian: big, type: 9, count: 1, value: 0xFFFF_FFFF)) == 1, "SLONG -1")
            // libexif cuts a LONG to the 16 bits of a SHORT: 65542 is 6.
            #expect(parse(Self.exif(bigEndian: big, type: 4, count: 1, value: 65536 + 6)) == 6)
            // Two SHORTs in the entry: the first counts.
            let six: [UInt8] = big ? [0, 6] : [6, 0], one: [UInt8] = big ? [0, 1] : [1, 0]
            #expect(parse(Self.exif(bigEndian: big, type: 3, count: 2, stored: six + one)) == 6, "two SHORTs")
            #expect(parse(Self.exif(bigEndian: big, type: 1, count: 1, stored: [6, 0, 0, 0])) == 6, "BYTE")
            #expect(parse(Self.exif(bigEndian: big, type: 6, count: 1, stored: [0xFA, 0, 0, 0])) == 1, "SBYTE -6")
            #expect(parse(Self.exif(bigEndian: big, type: 3, count: 0, value: 6)) == 1, "no value")
            // Values running past the payload (three SHORTs whose first, a 6, is its last two
            // bytes): libexif drops the entry, so there is no orientation; the 6 was read and
            // the image turned.
            let offset: [UInt8] = big ? [0, 0, 0, 22] : [22, 0, 0, 0]
            #expect(parse(Self.exif(bigEndian: big, type: 3, count: 3, stored: offset) + (big ? [0, 6] : [6, 0])) == 1, "past the end")
            #expect(parse(Self.exif(bigEndian: big, type: 5, count: 1, value: 6)) == 1, "RATIONAL")
            #expect(parse(Self.exif(bigEndian: big, type: 2, count: 1, value: 6)) == 1, "ASCII")
            #expect(parse(Self.exif(bigEndian: big, type: 3, count: 1, value: 6, entries: 500)) == 6, "found before the overrun")
        }
        let good = Self.exif(bigEndian: false, type: 3, count: 1, value: 6)
        // Cut anywhere before the value ends (a SHORT fills the first two of its four bytes).
        for cut in 0..<(good.count - 2) { #expect(parse(Array(good.prefix(cut))) == 1, "cut at \(cut)") }
        var bad = good
        bad[10] = 0xFF  // IFD0 offset far past the end
        #expect(parse(bad) == 1)
        // An entry libexif drops (an unknown type, or values past the end) before a good one:
        // the good one counts, as vips reads such files.
        for dropped: (type: UInt16, count: UInt32, stored: [UInt8]) in [(0, 1, [9, 0, 0, 0]), (3, 3, [0, 0x40, 0, 0]), (3, 0, [3, 0, 0, 0])] {
            var two = Self.exif(bigEndian: false, type: dropped.type, count: dropped.count, stored: dropped.stored, entries: 2)
            two += [0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0]  // orientation, SHORT, 1 value: 6
            #expect(parse(two) == 6, "after type \(dropped.type)")
        }
    }
}

import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// Rendered members against references made by libvips directly (`vips_thumbnail`, what
/// `vipsthumbnail` does), for every style and fit.
///
/// Tolerance (also in docs/PIPELINE.md): per 8-bit channel, after decoding our slot per
/// FORMAT.md and passing the reference through the same style's quantisation, the mean absolute
/// difference is at most 1.0 and at most 0.5 % of channel values differ by more than 8 (16 for
/// `16BitBGR`, whose 5-bit step is 8.2, so a rounding flip is one step on its own). The
/// pipeline derives members from one shrunk decode instead of thumbnailing per member, so a few
/// edge pixels differ by resampling; a wrong crop, fit, orientation or channel order fails by far.
@Suite struct PixelTests {
    static let photo = Corpus.photo("Landscape_1.jpg")  // 1800×1200, orientation 1
    static let meanTolerance = 1.0
    static let overTolerance = 0.005

    /// The reference pixel as the style stores it, decoded back (quantisation applied).
    static func quantised(_ p: [Int], _ style: PixelStyle) -> [Int] {
        switch style {
        case .bgra32, .bgr32: return [p[0], p[1], p[2], 255]
        case .bgr16:
            func q(_ c: Int) -> Int { let v = (c * 31 + 127) / 255; return (v << 3) | (v >> 2) }
            return [q(p[0]), q(p[1]), q(p[2]), 255]
        case .grayscale8:
            let y = (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8
            return [y, y, y, 255]
        }
    }

    static func expectMatches(_ slot: Slot, _ reference: RasterImage, at origin: (Int, Int) = (0, 0), _ label: String,
                              mean: Double = meanTolerance) {
        let d = Difference({ slot.rgba($0, $1) }, { quantised(reference.pixel($0, $1), slot.spec.style) },
                           width: reference.width, height: reference.height, x0: origin.0, y0: origin.1,
                           threshold: slot.spec.style == .bgr16 ? 16 : 8)
        #expect(d.mean <= mean && d.over <= overTolerance, "\(label): \(d)")
        print("[pixels] \(label): \(d)")
    }

    /// Every pixel outside `rect` is the letterbox: transparent for BGRA, background otherwise.
    static func expectBars(_ slot: Slot, outside rect: PixelRect, _ label: String) {
        var wrong = 0
        for y in 0..<slot.spec.height {
            for x in 0..<slot.spec.width where !(x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height) {
                let expected: [UInt8]
                switch slot.spec.style {
                case .bgra32: expected = [0, 0, 0, 0]
                case .bgr32: expected = [slot.spec.rendering.background.blue, slot.spec.rendering.background.green, slot.spec.rendering.background.red, 255]
                case .bgr16, .grayscale8: expected = [] // checked via rgba below
                }
                if expected.isEmpty {
                    let bg = slot.spec.rendering.background
                    if quantised([Int(bg.red), Int(bg.green), Int(bg.blue)], slot.spec.style) != slot.rgba(x, y) { wrong += 1 }
                } else if slot.bytes(x, y) != expected { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(label): \(wrong) letterbox pixels differ")
    }

    @Test(arguments: PixelStyle.allCases)
    func coverCentreMatchesVipsThumbnail(style: PixelStyle) throws {
        let spec = TableFormat(width: 120, height: 96, style: style, fit: .cover, crop: .centre)
        let (report, slots) = try render(.file(Self.photo), [spec])
        let reference = try Reference.thumbnail(Self.photo, width: 120, height: 96, .cover(VIPS_INTERESTING_CENTRE))
        #expect((reference.width, reference.height) == (120, 96))
        Self.expectMatches(slots[0], reference, "cover \(style)")
        #expect(report.members[0].contentRect == PixelRect(x: 0, y: 0, width: 120, height: 96))
        #expect(slots[0].paddingIsZero)
    }

    @Test(arguments: PixelStyle.allCases, [Fit.contain, Fit.inside])
    func containAndInsideLetterbox(style: PixelStyle, fit: Fit) throws {
        let spec = TableFormat(width: 100, height: 100, style: style, fit: fit, background: RGBAColor(red: 10, green: 200, blue: 30))
        let (report, slots) = try render(.file(Self.photo), [spec])
        let reference = try Reference.thumbnail(Self.photo, width: 100, height: 100, .inside)
        #expect((reference.width, reference.height) == (100, 67))
        let placed = PixelRect(x: 0, y: 16, width: 100, height: 67)
        Self.expectMatches(slots[0], reference, at: (placed.x, placed.y), "\(fit) \(style)")
        Self.expectBars(slots[0], outside: placed, "\(fit) \(style)")
        #expect(report.members[0].contentRect == (fit == .inside ? placed : PixelRect(x: 0, y: 0, width: 100, height: 100)))
        #expect(slots[0].paddingIsZero)
    }

    @Test(arguments: PixelStyle.allCases)
    func fillStretches(style: PixelStyle) throws {
        let spec = TableFormat(width: 90, height: 110, style: style, fit: .fill)
        let (_, slots) = try render(.file(Self.photo), [spec])
        let reference = try Reference.thumbnail(Self.photo, width: 90, height: 110, .force)
        #expect((reference.width, reference.height) == (90, 110))
        Self.expectMatches(slots[0], reference, "fill \(style)")
        #expect(slots[0].paddingIsZero)
    }

    /// Enlargements (`upscale: true`) of a PNG and of a JPEG holding the very same pixels come out
    /// byte for byte alike: one resampler draws both, its grids centred. libvips' resize, which
    /// drew the PNG's, put an enlarged image half a pixel right and down (about 5 off the
    /// JPEG's at 2×).
    @Test(arguments: [Fit.fill, .cover, .contain])
    func aPNGAndAJPEGOfTheSamePixelsEnlargeAlike(fit: Fit) throws {
        let dir = try TemporaryDirectory()
        try Reference.convert(Self.photo, to: dir.file("small.png"), maxSize: 90)
        try Reference.convert(dir.file("small.png"), to: dir.file("small.jpg"))
        try Reference.convert(dir.file("small.jpg"), to: dir.file("decoded.png"))  // the JPEG's own pixels
        let spec = TableFormat(width: 200, height: 150, style: .bgr32, fit: fit, upscale: true)
        let (jpeg, fromJPEG) = try render(.file(dir.file("small.jpg")), [spec])
        let (png, fromPNG) = try render(.file(dir.file("decoded.png")), [spec])
        #expect(jpeg.source.loader == "libjpeg" && png.source.loader.hasPrefix("pngload") && jpeg.members == png.members)
        let d = Difference({ fromJPEG[0].rgba($0, $1) }, { fromPNG[0].rgba($0, $1) }, width: 200, height: 150)
        #expect(d.max == 0, "\(fit): \(d)")
    }

    /// A 234×156 source stretched to 100×100: the scale of the axis the decode box fixes came
    /// out as 1.0000000000000002, and libvips' resize took it for an enlargement, which it
    /// draws half a pixel right and down (mean 10 off vips_thumbnail's).
    @Test func fillWhoseScaleIsOneOnAnAxisIsNotShifted() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("l234x156.png")
        try Reference.convert(Self.photo, to: source, maxSize: 234)
        let spec = TableFormat(width: 100, height: 100, style: .bgr32, fit: .fill)
        let (_, slots) = try render(.file(source), [spec])
        let reference = try Reference.thumbnail(source, width: 100, height: 100, .force)
        #expect((reference.width, reference.height) == (100, 100))
        Self.expectMatches(slots[0], reference, "fill 234x156")
    }

    /// A member is never resized from a sibling's intermediate that was enlarged on one axis
    /// (a 320×120 `fill` with upscaling, from 200×200): it carried the enlargement's
    /// interpolation (and libvips' half-pixel offset) into the smaller member, 4.6 off the
    /// same member drawn alone.
    @Test func aMemberIsNotResizedFromAnEnlargedIntermediate() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("sq200.png")
        try Reference.convert(Self.photo, to: dir.file("wide.png"), maxSize: 300)
        try PipelineRuntime.withLibvips {
            var out: UnsafeMutablePointer<VipsImage>?
            guard cvips_reference_thumbnail(dir.file("wide.png"), &out, 200, 200, VIPS_SIZE_BOTH, VIPS_INTERESTING_CENTRE) == 0,
                  let image = out else { throw CocoaError(.fileWriteUnknown) }
            defer { g_object_unref(image) }
            guard cvips_write_to_file(image, source) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
        let thumb = TableFormat(width: 48, height: 48, style: .bgr32)
        let banner = TableFormat(width: 320, height: 120, style: .bgr32, fit: .fill, upscale: true)
        let (_, family) = try render(.file(source), [banner, thumb])
        let (_, alone) = try render(.file(source), [thumb])
        let d = Difference({ family[1].rgba($0, $1) }, { alone[0].rgba($0, $1) }, width: 48, height: 48)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "\(d)")
    }

    /// A `cover` member whose cropped side rounds down (401×267 into 152×152: 228.28 wide):
    /// vips_thumbnail fitted the source inside the 228×152 decode box by that side's scale, a
    /// fraction of a pixel off the member's, so the image was stretched (mean 0.8 off
    /// vips_thumbnail's own crop here, 1.5 for a 401×301 source). The box's cropped side is a
    /// pixel wider, and the member is vips_thumbnail's, byte for byte.
    @Test(arguments: [(401, 152, 152), (1601, 100, 100), (401, 60, 152)])
    func aCoverWhoseCroppedSideRoundsDownIsNotStretched(source: Int, width: Int, height: Int) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("s.png")
        try Reference.convert(Self.photo, to: path, maxSize: source)
        let spec = TableFormat(width: width, height: height, style: .bgr32)
        let (_, slots) = try render(.file(path), [spec])
        let reference = try Reference.thumbnail(path, width: width, height: height, .cover(VIPS_INTERESTING_CENTRE))
        // Bit-identical, as a single member is (the decode is its own thumbnail).
        let d = Difference({ slots[0].rgba($0, $1) }, { Self.quantised(reference.pixel($0, $1), .bgr32) }, width: width, height: height)
        #expect(d.max == 0, "cover \(source) into \(width)x\(height): \(d)")
    }

    @Test(arguments: [CropStrategy.attention, .entropy])
    func smartCropsMatchVipsThumbnail(crop: CropStrategy) throws {
        let spec = TableFormat(width: 64, height: 128, style: .bgr32, fit: .cover, crop: crop)
        let (_, slots) = try render(.file(Self.photo), [spec])
        let reference = try Reference.thumbnail(Self.photo, width: 64, height: 128,
                                                .cover(crop == .attention ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_ENTROPY))
        Self.expectMatches(slots[0], reference, "cover \(crop)")
    }
}

extension PixelTests {
    /// The real case: several members from one decode, most derived by resizing the decoded
    /// image (or a larger member's uncropped intermediate), each against its own vips_thumbnail:
    /// a JPEG (libjpeg at 1/2) and the same pixels as a PNG (vips_thumbnail's decode into the
    /// largest member's box, then our resampler; no shrink-on-load).
    @Test(arguments: ["jpg", "png"])
    func severalMembersFromOneDecodeMatchTheirReferences(kind: String) throws {
        let dir = try TemporaryDirectory()
        let photo = kind == "jpg" ? Self.photo : dir.file("photo.png")
        if kind == "png" { try Reference.convert(Self.photo, to: photo) }
        let specs = [
            TableFormat(width: 300, height: 300, style: .bgra32, fit: .cover),
            TableFormat(width: 120, height: 96, style: .bgr32, fit: .cover),
            TableFormat(width: 100, height: 100, style: .bgr16, fit: .contain),
            TableFormat(width: 90, height: 110, style: .grayscale8, fit: .fill),
            TableFormat(width: 64, height: 128, style: .bgr32, fit: .cover, crop: .attention),
            TableFormat(width: 40, height: 40, style: .bgra32, fit: .cover),
        ]
        let renderer = ImageRenderer()
        let (report, slots) = try render(.file(photo), specs, renderer: renderer)
        #expect(report.decodes == 1 && renderer.decodeCount == 1)
        if kind == "jpg" {
            // The DCT scale that leaves the 300×300 member twice its size: 1/2 (libjpeg's), every
            // member resized from it or from an intermediate, the attention crop's included.
            #expect(report.source.loader == "libjpeg" && (report.source.decodedWidth, report.source.decodedHeight) == (900, 600))
        } else {
            // The 300×300 cover's own box: that member is vips_thumbnail's, the rest resized from it.
            #expect(report.source.loader.hasPrefix("pngload") && (report.source.decodedWidth, report.source.decodedHeight) == (450, 300))
        }
        let references = try [
            Reference.thumbnail(photo, width: 300, height: 300, .cover(VIPS_INTERESTING_CENTRE)),
            Reference.thumbnail(photo, width: 120, height: 96, .cover(VIPS_INTERESTING_CENTRE)),
            Reference.thumbnail(photo, width: 100, height: 100, .inside),
            Reference.thumbnail(photo, width: 90, height: 110, .force),
            Reference.thumbnail(photo, width: 64, height: 128, .cover(VIPS_INTERESTING_ATTENTION)),
            Reference.thumbnail(photo, width: 40, height: 40, .cover(VIPS_INTERESTING_CENTRE)),
        ]
        for (i, (slot, reference)) in zip(slots, references).enumerated() {
            let origin = specs[i].rendering.fit == .contain ? (0, 16) : (0, 0)
            // The PNG's 40×40 is 1.08 off: vips_thumbnail box-filters the whole image 15× before
            // its Lanczos, ours is Lanczos-3 alone from the 450×300 decode (libvips' resize of
            // that decode, box 3× then Lanczos: 0.95).
            Self.expectMatches(slot, reference, at: origin, "\(kind) member \(i) \(specs[i].rendering.fit) \(specs[i].width)×\(specs[i].height)",
                               mean: kind == "png" && i == 5 ? 1.15 : Self.meanTolerance)
            #expect(slot.paddingIsZero)
        }
    }
}

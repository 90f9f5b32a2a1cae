import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// The direct JPEG path (libjpeg and our Lanczos-3, no libvips): taken for plain JPEGs and RGB profiles,
/// decoding exactly as libvips does, and rendering what the libvips path renders within the
/// tolerance PixelTests holds both to against `vips_thumbnail`, but where a side is not a
/// multiple of the DCT scale: there it is within that tolerance of the whole image resized,
/// and `vips_thumbnail` is not.
@Suite struct DirectJPEGTests {
    static let formats = [
        TableFormat(width: 120, height: 96, style: .bgr32, fit: .cover),
        TableFormat(width: 100, height: 100, style: .bgra32, fit: .contain, cornerRadius: 10),
        TableFormat(width: 90, height: 110, style: .grayscale8, fit: .fill),
        TableFormat(width: 40, height: 40, style: .bgr16, fit: .cover),
    ]

    /// libvips' own `jpegload` at the same shrink gives the very same bytes: both are libjpeg,
    /// with the same settings.
    @Test(arguments: [1, 2, 4, 8])
    func theDecodeIsLibvipsDecodeByteForByte(shrink: Int) throws {
        for file in [Corpus.photo("Landscape_1.jpg"), Corpus.photo("Portrait_6.jpg")] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let ours = try #require(DecodeProbe.decode(bytes, shrink: shrink))
            let theirs = try PipelineRuntime.withLibvips {
                var out: UnsafeMutablePointer<VipsImage>?
                guard cvips_reference_jpegload(file, &out, Int32(shrink)) == 0, let out else { throw ImageTableError(.decodeFailed, "jpegload") }
                defer { g_object_unref(out) }
                return try Reference.raster(out)
            }
            #expect((ours.width, ours.height) == (theirs.width, theirs.height))
            #expect(ours.pixels == theirs.pixels, "\(file) at 1/\(shrink)")
        }
    }

    /// Every EXIF orientation, four fits and styles: the direct path against the libvips path,
    /// per channel a mean difference ≤ 1.0 and ≤ 0.5 % of values off by more than 8 (16 for
    /// 5-bit channels), as both are held to against `vips_thumbnail`.
    @Test(arguments: ["Landscape", "Portrait"])
    func everyOrientationMatchesTheLibvipsPath(kind: String) throws {
        for n in 0...8 {
            let file = Corpus.photo("\(kind)_\(n).jpg")
            let (direct, ours) = try render(.file(file), Self.formats, renderer: ImageRenderer())
            let (viaLibvips, theirs) = try render(.file(file), Self.formats, renderer: ImageRenderer(directJPEG: false))
            #expect(direct.source.loader == "libjpeg" && viaLibvips.source.loader.hasPrefix("jpegload"))
            #expect(direct.source.orientation == viaLibvips.source.orientation)
            #expect(direct.members == viaLibvips.members)
            for (i, format) in Self.formats.enumerated() {
                let d = Difference({ ours[i].rgba($0, $1) }, { theirs[i].rgba($0, $1) }, width: format.width, height: format.height,
                                   threshold: format.style == .bgr16 ? 16 : 8)
                #expect(d.mean <= 1.0 && d.over <= 0.005, "\(kind)_\(n) \(format.width)×\(format.height): \(d)")
            }
        }
    }

    /// A JPEG whose sides are not multiples of the DCT scale (1601×1067, decoded at 1/8 into
    /// 201×134 pixels, the last ones covering an eighth and three eighths of a block): the
    /// decoded image starts where the source does, so its grid is centred on the source's true
    /// extent, not on the decoded pixels' (which drew the image 0.2 px up and left, mean 5 off
    /// the same image resized whole). Against libvips resizing the whole decoded JPEG.
    @Test(arguments: [(64, 64), (100, 75), (150, 150)])
    func aSizeNotAMultipleOfTheShrinkIsNotShifted(size: (Int, Int)) throws {
        let dir = try TemporaryDirectory()
        let (png, jpeg, whole) = (dir.file("s.png"), dir.file("s.jpg"), dir.file("whole.png"))
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: png, maxSize: 1601)
        try Reference.convert(png, to: jpeg)
        try Reference.convert(jpeg, to: whole)  // the JPEG's pixels, decoded at full size
        let format = TableFormat(width: size.0, height: size.1, style: .bgr32)
        let (report, slots) = try render(.file(jpeg), [format])
        #expect(report.source.loader == "libjpeg" && report.source.width == 1601 && report.source.decodedWidth < 1601)
        let reference = try Reference.thumbnail(whole, width: size.0, height: size.1, .cover(VIPS_INTERESTING_CENTRE))
        let d = Difference({ slots[0].rgba($0, $1) }, { reference.pixel($0, $1) }, width: size.0, height: size.1)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "\(size): \(d)")
        // The libvips path (a JPEG with a profile, CMYK or damage takes it) decodes at the same
        // scale (libvips' jpegload drops the last partial block: 200×133 at 1/8) and draws with
        // the same resampler: vips_thumbnail, which resized the shrunk decode as the whole
        // image, was 1.6–5.8 off the whole image here.
        let (viaLibvips, theirs) = try render(.file(jpeg), [format], renderer: ImageRenderer(directJPEG: false))
        #expect(viaLibvips.source.loader.hasPrefix("jpegload") && viaLibvips.source.decodedWidth < report.source.decodedWidth)
        let libvipsPath = Difference({ theirs[0].rgba($0, $1) }, { reference.pixel($0, $1) }, width: size.0, height: size.1)
        #expect(libvipsPath.mean <= 1.0 && libvipsPath.over <= 0.005, "\(size), the libvips path: \(libvipsPath)")
        // An attention crop: libvips' smartcrop of our resize, against vips_thumbnail's of the
        // whole image (which made it 1.4–2.6 off before, resizing the shrunk decode itself).
        let smart = TableFormat(width: size.1, height: size.0 * 2, style: .bgr32, crop: .attention)
        let (_, cropped) = try render(.file(jpeg), [smart])
        let smartReference = try Reference.thumbnail(whole, width: size.1, height: size.0 * 2, .cover(VIPS_INTERESTING_ATTENTION))
        let s = Difference({ cropped[0].rgba($0, $1) }, { smartReference.pixel($0, $1) }, width: size.1, height: size.0 * 2)
        #expect(s.mean <= 1.0 && s.over <= 0.005, "\(size.1)×\(size.0 * 2), attention: \(s)")
    }

    /// The same for JPEGs with a Display P3 profile (the direct path, converted per member after
    /// resizing) and CMYK ones (decoded by libvips, drawn by our resampler). Against the whole
    /// image converted to sRGB, then resized.
    @Test(arguments: ["p3", "cmyk"], [(64, 64), (100, 75), (150, 150)])
    func aProfileOrCMYKOfASizeNotAMultipleOfTheShrinkIsNotStretched(profile: String, size: (Int, Int)) throws {
        let dir = try TemporaryDirectory()
        let (png, jpeg, whole) = (dir.file("s.png"), dir.file("s.jpg"), dir.file("whole.png"))
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: png, maxSize: 1601)
        try Reference.jpegWithProfile(png, profile: profile, to: jpeg)
        try Reference.sRGB(jpeg, to: whole)
        let format = TableFormat(width: size.0, height: size.1, style: .bgr32)
        let (report, slots) = try render(.file(jpeg), [format])
        #expect(report.source.loader == (profile == "cmyk" ? "jpegload_source" : "libjpeg"), "\(report.source.loader)")
        #expect(report.source.width == 1601 && report.source.decodedWidth < 1601)
        #expect(report.source.isCMYK == (profile == "cmyk") && report.source.hasICCProfile)
        let reference = try Reference.thumbnail(whole, width: size.0, height: size.1, .cover(VIPS_INTERESTING_CENTRE))
        let d = Difference({ slots[0].rgba($0, $1) }, { reference.pixel($0, $1) }, width: size.0, height: size.1)
        // CMYK is converted after the DCT scaling has averaged its inks (as vips_thumbnail does
        // it), the reference before: at 1/8, 0.75 % of values differ by more than 8 (max 17).
        #expect(d.mean <= 1.0 && d.over <= (profile == "cmyk" ? 0.01 : 0.005), "\(profile) \(size): \(d)")
    }

    /// The same for grey JPEGs the direct path declines: one with a grey profile (its tone
    /// curve a power of 2.2, not sRGB's), and one with damage libjpeg warns about. libvips
    /// decodes them at the DCT scale and converts them to sRGB, our resampler draws them;
    /// `vips_thumbnail` stretched the shrunk decode (1.5–2.7 mean off the whole image here).
    /// Against the whole image converted to sRGB, then resized.
    @Test(arguments: ["grey-profile", "damage"], [(64, 64), (100, 75), (150, 150)])
    func aDeclinedGreyJPEGOfASizeNotAMultipleOfTheShrinkIsNotStretched(kind: String, size: (Int, Int)) throws {
        let dir = try TemporaryDirectory()
        let (png, grey, jpeg, whole) = (dir.file("s.png"), dir.file("grey.jpg"), dir.file("s.jpg"), dir.file("whole.png"))
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: png, maxSize: 1601)
        try Reference.greyJPEG(png, to: grey)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: grey))
        if kind == "grey-profile" {
            bytes = Reference.inserting(segment: Reference.iccSegment(Reference.greyProfile(gamma: 2.2)), into: bytes)
        } else {
            bytes.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(bytes.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        }
        try bytes.write(to: URL(fileURLWithPath: jpeg))
        try kind == "grey-profile" ? Reference.sRGB(jpeg, to: whole) : Reference.convert(jpeg, to: whole)
        let format = TableFormat(width: size.0, height: size.1, style: .bgr32)
        let (report, slots) = try render(.file(jpeg), [format])
        #expect(report.source.loader.hasPrefix("jpegload") && report.source.width == 1601 && report.source.decodedWidth < 1601,
                "\(report.source)")
        #expect(report.source.hasICCProfile == (kind == "grey-profile"))
        let reference = try Reference.thumbnail(whole, width: size.0, height: size.1, .cover(VIPS_INTERESTING_CENTRE))
        let d = Difference({ slots[0].rgba($0, $1) }, { x, y in
            let p = reference.pixel(x, y)
            return p.count == 1 ? [p[0], p[0], p[0]] : p
        }, width: size.0, height: size.1)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "\(kind) \(size): \(d)")
        // Grey in, grey out (lcms2's grey to sRGB rounds a channel a level off here and there).
        let spread = (0..<size.1).flatMap { y in (0..<size.0).map { x in let p = slots[0].rgba(x, y); return p[0..<3].max()! - p[0..<3].min()! } }.max()!
        #expect(spread <= (kind == "grey-profile" ? 1 : 0), "\(kind) \(size): channels \(spread) apart")
    }

    /// What the direct path declines goes to libvips: CMYK, a profile lcms2 cannot read, a grey
    /// JPEG with a profile, and damage libjpeg only warns about (reported in libvips' words). An
    /// RGB profile and smart crops (libvips' `smartcrop` of our resize) stay on the direct path.
    @Test func cmykBadProfilesAndDamageGoToLibvips() throws {
        let dir = try TemporaryDirectory()
        let original = Corpus.photo("Landscape_1.jpg")
        let spec = [TableFormat(width: 64, height: 64, style: .bgr32)]
        try Reference.jpegWithProfile(original, profile: "p3", to: dir.file("p3.jpg"))
        try Reference.jpegWithProfile(original, profile: "cmyk", to: dir.file("cmyk.jpg"))
        let garbage = Reference.inserting(segment: Reference.iccSegment(Data(repeating: 0x5A, count: 300)),
                                          into: try Data(contentsOf: URL(fileURLWithPath: original)))
        try garbage.write(to: URL(fileURLWithPath: dir.file("garbage-profile.jpg")))
        for (file, loader) in [("p3.jpg", "libjpeg"), ("cmyk.jpg", "jpegload_source"), ("garbage-profile.jpg", "jpegload_source")] {
            let (report, _) = try render(.file(dir.file(file)), spec)
            #expect(report.source.loader == loader, "\(file): \(report.source.loader)")
            #expect(report.source.hasICCProfile, "\(file)")
        }
        let (smart, _) = try render(.file(original), [TableFormat(width: 64, height: 128, style: .bgr32, crop: .attention)])
        #expect(smart.source.loader == "libjpeg")
        var junk = try Data(contentsOf: URL(fileURLWithPath: original))
        junk.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(junk.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        let renderer = ImageRenderer()
        let (damaged, _) = try render(.data(junk, name: "junk.jpg"), spec, renderer: renderer)
        #expect(damaged.source.loader.hasPrefix("jpegload") && damaged.warnings.contains { $0.contains("Corrupt JPEG data") })
        #expect(damaged.decodes == 1 && renderer.decodeCount == 1, "the declined direct decode is not counted")
        let (plain, _) = try render(.file(original), spec)
        #expect(plain.source.loader == "libjpeg" && plain.warnings.isEmpty)
    }

    /// A Display P3 JPEG through the direct path (converted per member, after resizing) and
    /// through libvips (converted before): the same members within the tolerance, for every
    /// fit and style.
    @Test func aProfileConvertedAfterResizingMatchesTheLibvipsPath() throws {
        let dir = try TemporaryDirectory()
        try Reference.jpegWithProfile(Corpus.photo("Portrait_6.jpg"), profile: "p3", to: dir.file("p3.jpg"))
        let (direct, ours) = try render(.file(dir.file("p3.jpg")), Self.formats)
        let (viaLibvips, theirs) = try render(.file(dir.file("p3.jpg")), Self.formats, renderer: ImageRenderer(directJPEG: false))
        #expect(direct.source.loader == "libjpeg" && viaLibvips.source.loader.hasPrefix("jpegload"))
        #expect(direct.source.hasICCProfile && viaLibvips.source.hasICCProfile && direct.members == viaLibvips.members)
        for (i, format) in Self.formats.enumerated() {
            let d = Difference({ ours[i].rgba($0, $1) }, { theirs[i].rgba($0, $1) }, width: format.width, height: format.height,
                               threshold: format.style == .bgr16 ? 16 : 8)
            #expect(d.mean <= 1.0 && d.over <= 0.005, "\(format.width)×\(format.height): \(d)")
        }
    }

    /// A JPEG thinner than its DCT scale that libvips decodes (a garbage profile, CMYK): libvips'
    /// `jpegload` rounds a shrunk side down, and 5 pixels at 1/8 made an image of width 0, on
    /// which libvips 8.14 aborts the process. The shrink is halved until a pixel is left.
    @Test(arguments: ["garbage", "cmyk"])
    func aJPEGThinnerThanItsShrinkIsDrawn(kind: String) throws {
        let dir = try TemporaryDirectory()
        try Reference.stretched(Corpus.photo("Landscape_1.jpg"), width: 5, height: 2000, to: dir.file("thin.jpg"))
        if kind == "cmyk" {
            try Reference.jpegWithProfile(dir.file("thin.jpg"), profile: "cmyk", to: dir.file("source.jpg"))
        } else {
            try Reference.inserting(segment: Reference.iccSegment(Data(repeating: 0x5A, count: 300)),
                                    into: Data(contentsOf: URL(fileURLWithPath: dir.file("thin.jpg"))))
                .write(to: URL(fileURLWithPath: dir.file("source.jpg")))
        }
        let (report, slots) = try render(.file(dir.file("source.jpg")), [TableFormat(width: 64, height: 64, style: .bgr32, fit: .contain)])
        #expect(report.source.loader.hasPrefix("jpegload") && report.source.width == 5 && report.members[0].contentRect.height == 64)
        // The drawn column is the photo's, not the letterbox's black.
        #expect((0..<64).contains { slots[0].rgba(32, $0) != [0, 0, 0, 255] })
    }

    /// A plain JPEG 5 pixels wide, fitted inside 100×100 (a 1/20 scale, which would decode at
    /// 1/8): its one decoded column averaged the 5 real ones with 3 repeats of the last, leaning
    /// to it (16.8 mean off the whole image). Sides keep four decoded pixels at least.
    @Test(arguments: [Fit.inside, .contain])
    func aThinJPEGIsNotTintedByItsPaddedBlock(fit: Fit) throws {
        let dir = try TemporaryDirectory()
        try Reference.stretched(Corpus.photo("Landscape_1.jpg"), width: 5, height: 2000, to: dir.file("thin.jpg"))
        try Reference.convert(dir.file("thin.jpg"), to: dir.file("whole.png"))  // its pixels, decoded whole
        let (report, slots) = try render(.file(dir.file("thin.jpg")), [TableFormat(width: 100, height: 100, style: .bgr32, fit: fit)])
        let reference = try Reference.thumbnail(dir.file("whole.png"), width: 100, height: 100, .inside)
        let rect = try #require(report.members.first).contentRect
        let (x0, y0) = fit == .inside ? (rect.x, rect.y) : ((100 - reference.width) / 2, (100 - reference.height) / 2)
        #expect(report.source.loader == "libjpeg" && (reference.width, reference.height) == (1, 100))
        let d = Difference({ slots[0].rgba($0, $1) }, { reference.pixel($0, $1) }, width: reference.width, height: reference.height,
                           x0: x0, y0: y0)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "\(fit): \(d)")
    }

    /// A profile for another colour space than the image's: a grey JPEG carrying an RGB profile
    /// (Pillow keeps an image's profile when it turns it grey), which libvips 8.14 refuses
    /// ("unable to load or find any compatible input profile": the source failed), and an RGB
    /// JPEG carrying a grey one, which libvips took for an image of five bands
    /// (`unsupported-format`). The profile is left out, with a warning, as libvips leaves out a
    /// CMYK profile on an RGB image: the pixels are the image's without a profile.
    @Test(arguments: ["grey", "rgb"])
    func aProfileForAnotherColourSpaceIsIgnored(image: String) throws {
        let dir = try TemporaryDirectory()
        let plain = dir.file("plain.jpg"), tagged = dir.file("tagged.jpg")
        if image == "grey" {
            try Reference.greyJPEG(Corpus.photo("Landscape_1.jpg"), to: plain)
            try Reference.jpegWithProfile(Corpus.photo("Landscape_1.jpg"), profile: "p3", to: dir.file("p3.jpg"))
        } else {
            try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: plain)
        }
        let segment = image == "grey" ? try Reference.iccSegment(of: dir.file("p3.jpg")) : Reference.iccSegment(Reference.greyProfile(gamma: 2.2))
        try Reference.inserting(segment: segment, into: Data(contentsOf: URL(fileURLWithPath: plain))).write(to: URL(fileURLWithPath: tagged))
        let spec = [TableFormat(width: 64, height: 64, style: .bgr32)]
        let (report, ours) = try render(.file(tagged), spec)
        let (_, reference) = try render(.file(plain), spec)
        #expect(report.source.loader.hasPrefix("jpegload") && report.source.hasICCProfile)
        #expect(report.warnings.contains("the embedded ICC profile is not for \(image == "grey" ? "grey" : "RGB") images; it is ignored"),
                "\(report.warnings)")
        let d = Difference({ ours[0].rgba($0, $1) }, { reference[0].rgba($0, $1) }, width: 64, height: 64)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "\(image): \(d)")
    }

    /// A greyscale JPEG comes out grey in every channel, as through libvips.
    @Test func greyscaleJPEGsAreReplicatedToRGB() throws {
        let dir = try TemporaryDirectory()
        let grey = dir.file("grey.jpg")
        try Reference.greyJPEG(Corpus.photo("Landscape_1.jpg"), to: grey)
        let spec = [TableFormat(width: 80, height: 60, style: .bgr32)]
        let (direct, ours) = try render(.file(grey), spec)
        let (_, theirs) = try render(.file(grey), spec, renderer: ImageRenderer(directJPEG: false))
        #expect(direct.source.loader == "libjpeg")
        let d = Difference({ ours[0].rgba($0, $1) }, { theirs[0].rgba($0, $1) }, width: 80, height: 60)
        #expect(d.mean <= 1.0, "\(d)")
        #expect((0..<60).allSatisfy { y in (0..<80).allSatisfy { x in let p = ours[0].rgba(x, y); return p[0] == p[1] && p[1] == p[2] } })
    }
}

extension DirectJPEGTests {
    /// A header claiming 16000×16000 over the data of a 64×64 image: libjpeg only warns and pads
    /// with grey (libvips baked it as flat grey); it fails as `truncated`.
    @Test func aHeaderClaimingMoreRowsThanItsDataIsTruncated() throws {
        let dir = try TemporaryDirectory()
        let small = dir.file("small.jpg")
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: small, maxSize: 64)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: small)))
        // The baseline SOF0 marker: FF C0, length (2), precision (1), height (2), width (2).
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes[sof + 5] = 0x3E; bytes[sof + 6] = 0x80  // 16000
        bytes[sof + 7] = 0x3E; bytes[sof + 8] = 0x80
        let spec = [TableFormat(width: 150, height: 150, style: .bgr32)]
        do {
            _ = try render(.data(Data(bytes), name: "liar.jpg"), spec)
            Issue.record("rendered a file whose data ends at 64 of 16000 rows")
        } catch {
            #expect(error.code == .truncated && error.path == "liar.jpg", "\(error)")
        }
    }

    /// The bound, at its edges: a bit a block for Huffman coding; arithmetic coding has no floor
    /// (`jpegtran -arithmetic` makes a white 16000×16000 JPEG of 128 bytes, 12 million blocks
    /// of 4:4:4 coefficients, and a page of text of 9000×9000 412 KB), so it is not bounded.
    @Test func theBlocksBoundIsABitABlockForHuffmanOnly() {
        #expect(JPEGDecoder.fitsItsData(blocks: 8_000, arithmetic: false, bytes: 1_000))
        #expect(!JPEGDecoder.fitsItsData(blocks: 8_001, arithmetic: false, bytes: 1_000))
        #expect(JPEGDecoder.fitsItsData(blocks: 3 * 2_000 * 2_000, arithmetic: true, bytes: 128))
        #expect(JPEGDecoder.fitsItsData(blocks: 3 * 1_125 * 1_125, arithmetic: true, bytes: 412_000))
    }

    /// A progressive JPEG with 1,100 empty scans before its end: libjpeg goes over every block
    /// for each scan, and 20,000 of them in a 321 KB file of 4000×4000 took a minute of CPU,
    /// the bake's whole timeout with a few more. More than 1,000 scans are refused.
    @Test func aJPEGOfThousandsOfScansIsRefused() throws {
        let dir = try TemporaryDirectory()
        let progressive = dir.file("p.jpg")
        try Reference.progressiveJPEG(Corpus.photo("Landscape_1.jpg"), maxSize: 64, to: progressive, scratch: dir.file("small.png"))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: progressive)))
        #expect(Array(bytes.suffix(2)) == [0xFF, 0xD9])
        // An AC scan of the first component that codes nothing: SOS, length 8, one component
        // (id 1, tables 0), spectral 1...63, no approximation.
        func withScans(_ count: Int) -> Data {
            let scan: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x01, 0x3F, 0x00]
            return Data(bytes.dropLast(2) + Array((0..<count).map { _ in scan }.joined()) + [0xFF, 0xD9])
        }
        let spec = [TableFormat(width: 32, height: 32, style: .bgr32)]
        do {
            _ = try render(.data(withScans(1100), name: "scans.jpg"), spec)
            Issue.record("rendered a JPEG of 1,100 extra scans")
        } catch {
            #expect(error.code == .decodeFailed && error.cause == "libjpeg: more than 1000 scans", "\(error)")
        }
        // A few empty scans are damage libvips reports as it always has, not a refusal.
        let few = Result { () throws(ImageTableError) in try render(.data(withScans(5), name: "few.jpg"), spec) }
        if case .failure(let error) = few { #expect(!"\(error)".contains("scans"), "\(error)") }
    }

    /// The same bound for a JPEG the direct path hands to libvips (CMYK here), which decodes
    /// every scan libjpeg finds: its scans are counted from the markers before either decoder
    /// starts. An embedded thumbnail's scans, inside its APP1 segment, are not the file's.
    @Test func aJPEGOfThousandsOfScansIsRefusedOnTheLibvipsPathToo() throws {
        let dir = try TemporaryDirectory()
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: dir.file("small.png"), maxSize: 64)
        try Reference.jpegWithProfile(dir.file("small.png"), profile: "cmyk", to: dir.file("cmyk.jpg"), progressive: true)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.file("cmyk.jpg"))))
        #expect(Array(bytes.suffix(2)) == [0xFF, 0xD9])
        // An AC scan of the first component that codes nothing (as above); libjpeg names CMYK's
        // components C, M, Y and K, and the frame header (SOF2) says so.
        var frame = 2
        while bytes[frame + 1] != 0xC2 { frame += 2 + Int(bytes[frame + 2]) << 8 + Int(bytes[frame + 3]) }
        let scan: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 0x01, bytes[frame + 10], 0x00, 0x01, 0x3F, 0x00]
        func withScans(_ count: Int) -> [UInt8] { Array(bytes.dropLast(2)) + Array((0..<count).map { _ in scan }.joined()) + [0xFF, 0xD9] }
        let spec = [TableFormat(width: 32, height: 32, style: .bgr32)]
        do {
            let (report, _) = try render(.data(Data(withScans(1100)), name: "cmyk-scans.jpg"), spec)
            Issue.record("rendered a CMYK JPEG of 1,100 extra scans (\(report.source.loader))")
        } catch {
            #expect(error.code == .decodeFailed && error.cause == "libjpeg: more than 1000 scans", "\(error)")
        }
        // The count itself: the file's own scans, stuffed bytes and restarts in its data passed
        // over; 1,100 scans inside an APP1 segment (a thumbnail's) are not counted.
        let own = withScans(0).withUnsafeBytes { JPEGScans.count(in: $0, upTo: 5000) }
        #expect((3...20).contains(own), "\(own) scans")
        #expect(withScans(1100).withUnsafeBytes { JPEGScans.count(in: $0, upTo: 5000) } == own + 1100)
        #expect(withScans(1100).withUnsafeBytes { JPEGScans.count(in: $0, upTo: 1000) } == 1001)
        let thumbnail = Array((0..<1100).map { _ in scan }.joined())
        let app1 = [0xFF, 0xE1, UInt8((thumbnail.count + 2) >> 8), UInt8((thumbnail.count + 2) & 0xFF)] + thumbnail
        let inAPP1 = Array(bytes.prefix(2)) + app1 + bytes.dropFirst(2)
        #expect(inAPP1.withUnsafeBytes { JPEGScans.count(in: $0, upTo: 5000) } == own)
        _ = try render(.data(Data(inAPP1), name: "thumbnail.jpg"), spec)
    }

    /// A progressive JPEG of 64×64 whose header claims 16383×16383: libjpeg allocates 128 bytes
    /// of coefficients for each of its 12.6 million blocks before reading a scan (a worker
    /// reached 1.6 GB), libvips' loader as ours. Every block of a Huffman JPEG costs a bit at
    /// least, so 2,873 bytes cannot hold them: refused from the header, before either decodes.
    @Test func aProgressiveHeaderClaimingMoreBlocksThanItsDataIsRefusedBeforeDecoding() throws {
        let dir = try TemporaryDirectory()
        let progressive = dir.file("p.jpg")
        try Reference.progressiveJPEG(Corpus.photo("Landscape_1.jpg"), maxSize: 64, to: progressive, scratch: dir.file("small.png"))
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: progressive)))
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC2 }, "a progressive frame")
        // As it is, it renders.
        let spec = [TableFormat(width: 32, height: 32, style: .bgr32)]
        #expect(try render(.data(Data(bytes), name: "p.jpg"), spec).0.source.loader == "libjpeg")
        bytes[sof + 5] = 0x3F; bytes[sof + 6] = 0xFF  // 16383 rows
        bytes[sof + 7] = 0x3F; bytes[sof + 8] = 0xFF  // and columns
        do {
            _ = try render(.data(Data(bytes), name: "bomb.jpg"), spec)
            Issue.record("rendered 16383×16383 from \(bytes.count) bytes")
        } catch {
            #expect(error.code == .truncated && error.path == "bomb.jpg", "\(error)")
            #expect(error.cause == "the header claims 16383×16383 pixels, 12582912 blocks, more than its \(bytes.count) bytes can hold",
                    "\(error)")
        }
    }
}

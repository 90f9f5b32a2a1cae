import CLibvips
import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real-world sources: EXIF orientations, PngSuite, colour profiles, CMYK, decode counting.
@Suite struct SourceTests {
    /// Every `Landscape_N` / `Portrait_N` (EXIF orientation N; 0 = no tag) renders upright: it
    /// matches the orientation-1 file within a mean of 2.0 per channel (the files are separate
    /// JPEG encodings of one photo). A wrong rotation or mirror gives a mean above 20.
    @Test(arguments: ["Landscape", "Portrait"])
    func everyExifOrientationComesOutUpright(kind: String) throws {
        let spec = TableFormat(width: 96, height: 96, style: .bgr32, fit: .contain)
        let (_, upright) = try render(.file(Corpus.photo("\(kind)_1.jpg")), [spec])
        for n in [0, 2, 3, 4, 5, 6, 7, 8] {
            let (report, slots) = try render(.file(Corpus.photo("\(kind)_\(n).jpg")), [spec])
            #expect(report.source.orientation == max(n, 1))
            #expect(kind == "Landscape" ? report.source.width > report.source.height : report.source.width < report.source.height)
            let d = Difference({ slots[0].rgba($0, $1) }, { upright[0].rgba($0, $1) }, width: 96, height: 96)
            #expect(d.mean <= 2.0, "\(kind)_\(n): \(d)")
        }
    }

    /// Every PngSuite image renders, except the deliberately corrupt `x*` files, which fail with
    /// a typed error naming the file. Nothing crashes.
    @Test func pngSuiteRendersOrFailsCleanly() throws {
        let files = Corpus.pngSuiteFiles
        #expect(files.count >= 170, "PngSuite not found under \(Corpus.root)")
        let renderer = ImageRenderer()
        let specs = [TableFormat(width: 24, height: 24, style: .bgra32, cornerRadius: 4),
                     TableFormat(width: 16, height: 12, style: .grayscale8, fit: .inside)]
        var failures: [String: ImageTableError.Code] = [:]
        for file in files {
            let name = URL(fileURLWithPath: file).lastPathComponent
            do {
                let (report, slots) = try render(.file(file), specs, renderer: renderer)
                #expect(!name.hasPrefix("x"), "\(name) is corrupt but rendered")
                #expect(slots.allSatisfy { $0.paddingIsZero })
                for y in 0..<24 {
                    for x in 0..<24 {
                        let p = slots[0].bytes(x, y)
                        #expect(p[0] <= p[3] && p[1] <= p[3] && p[2] <= p[3], "\(name) not premultiplied at \(x),\(y)")
                    }
                }
                #expect(report.decodes == 1)
            } catch {
                #expect(name.hasPrefix("x"), "\(name) failed: \(error)")
                #expect(error.path == file && !error.message.isEmpty)
                #expect([.unsupportedFormat, .decodeFailed, .truncated].contains(error.code), "\(error)")
                failures[name] = error.code
                print("[pngsuite] \(error)")
            }
        }
        #expect(failures.count == files.filter { URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("x") }.count)
        // Bad signatures are not PNGs at all; broken chunks are corrupt PNGs.
        #expect(failures["xs1n0g01.png"] == .unsupportedFormat)
        #expect(failures["xcsn0g01.png"] == .decodeFailed)
    }

    @Test func oneDecodePerSourceWhateverTheNumberOfMembers() throws {
        let renderer = ImageRenderer()
        let specs = [600, 300, 150, 75].flatMap { size in
            PixelStyle.allCases.map { TableFormat(width: size, height: size, style: $0) }
        } + [TableFormat(width: 200, height: 50, style: .bgr32, fit: .fill), TableFormat(width: 99, height: 99, style: .bgra32, fit: .inside)]
        let before = PipelineRuntime.totalDecodes
        for (i, name) in ["Landscape_1.jpg", "Portrait_6.jpg", "Landscape_3.jpg"].enumerated() {
            let (report, _) = try render(.file(Corpus.photo(name)), specs, renderer: renderer)
            #expect(report.decodes == 1)
            #expect(renderer.decodeCount == i + 1)
        }
        #expect(PipelineRuntime.totalDecodes >= before + 3)
    }

    @Test func inMemoryBytesRenderLikeTheFile() throws {
        let path = Corpus.photo("Portrait_5.jpg")
        let specs = [TableFormat(width: 80, height: 60, style: .bgra32), TableFormat(width: 33, height: 33, style: .bgr16, fit: .contain)]
        let (fileReport, fromFile) = try render(.file(path), specs)
        let (dataReport, fromData) = try render(.data(try Data(contentsOf: URL(fileURLWithPath: path)), name: "cache-entry"), specs)
        #expect(fileReport == dataReport)
        for (a, b) in zip(fromFile, fromData) { #expect(Array(a.buffer) == Array(b.buffer)) }
    }

    /// A Display P3 JPEG against the sRGB original, upright whatever its EXIF orientation (a
    /// wrong turn scores over 20).
    @Test(arguments: ["Landscape_1.jpg", "Landscape_6.jpg", "Portrait_7.jpg"])
    func embeddedProfilesAreConvertedToSRGB(photo: String) throws {
        let dir = try TemporaryDirectory()
        let original = Corpus.photo(photo)
        let p3 = dir.file("p3.jpg")
        try Reference.jpegWithProfile(original, profile: "p3", to: p3)
        let spec = TableFormat(width: 120, height: 80, style: .bgr32)
        let (plain, reference) = try render(.file(original), [spec])
        let (report, slots) = try render(.file(p3), [spec])
        #expect(report.source.hasICCProfile && !report.source.isCMYK && report.source.loader == "libjpeg")
        #expect(report.source.orientation == plain.source.orientation && report.source.orientation == Int(photo.dropLast(4).last!.wholeNumberValue!))
        let d = Difference({ slots[0].rgba($0, $1) }, { reference[0].rgba($0, $1) }, width: 120, height: 80)
        // Converted: 0.40–0.50; left as P3, 1.33 for Portrait_7 and 2.14 for the others.
        #expect(d.mean <= 0.8, "P3 → sRGB: \(d)")
    }

    /// A Display P3 PNG (libvips' path, the profile converted per member by a kept transform)
    /// and a Display P3 PNG with alpha (libvips' own conversion), against the whole image
    /// converted to sRGB, then resized by vips_thumbnail.
    @Test(arguments: [false, true])
    func profilesOfOtherFormatsAreConvertedToSRGB(alpha: Bool) throws {
        let dir = try TemporaryDirectory()
        let (small, p3, png, whole) = (dir.file("small.png"), dir.file("p3.jpg"), dir.file("p3.png"), dir.file("whole.png"))
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: small, maxSize: 600)
        try Reference.jpegWithProfile(small, profile: "p3", to: p3)
        try Reference.convert(p3, to: png)
        if alpha { try Reference.addAlpha(png) }
        try Reference.sRGB(png, to: whole)
        let spec = TableFormat(width: 120, height: 80, style: .bgr32)
        let (report, slots) = try render(.file(png), [spec])
        #expect(report.source.loader.hasPrefix("pngload") && report.source.hasICCProfile && report.source.hasAlpha == alpha)
        let reference = try Reference.thumbnail(whole, width: 120, height: 80, .cover(VIPS_INTERESTING_CENTRE))
        let d = Difference({ slots[0].rgba($0, $1) }, { reference.pixel($0, $1) }, width: 120, height: 80)
        #expect(d.mean <= 1.0 && d.over <= 0.005, "P3 PNG, alpha \(alpha): \(d)")
        // Against the original's sRGB pixels: a skipped conversion is 3.4 off (libvips-8.14.md).
        let (_, original) = try render(.file(small), [spec])
        let o = Difference({ slots[0].rgba($0, $1) }, { original[0].rgba($0, $1) }, width: 120, height: 80)
        #expect(o.mean <= 1.5, "P3 PNG against the sRGB original: \(o)")
    }

    /// Two RGB profiles in one process each get their own kept transform: an sRGB-tagged JPEG
    /// drawn after a Display P3 one is not converted as P3 (which puts it 2 off).
    @Test func twoProfilesEachGetTheirOwnTransform() throws {
        let dir = try TemporaryDirectory()
        let original = Corpus.photo("Landscape_1.jpg")
        let spec = TableFormat(width: 120, height: 80, style: .bgr32)
        let (_, reference) = try render(.file(original), [spec])
        for profile in ["p3", "srgb", "p3", "srgb"] {
            try Reference.jpegWithProfile(original, profile: profile, to: dir.file("\(profile).jpg"))
            let (report, slots) = try render(.file(dir.file("\(profile).jpg")), [spec])
            #expect(report.source.loader == "libjpeg" && report.source.hasICCProfile)
            let d = Difference({ slots[0].rgba($0, $1) }, { reference[0].rgba($0, $1) }, width: 120, height: 80)
            #expect(d.mean <= 0.8, "\(profile): \(d)")
        }
    }

    @Test func cmykIsTransformedToSRGB() throws {
        let dir = try TemporaryDirectory()
        let original = Corpus.photo("Landscape_6.jpg")
        let cmyk = dir.file("cmyk.jpg")
        try Reference.jpegWithProfile(original, profile: "cmyk", to: cmyk)
        let specs = [TableFormat(width: 120, height: 80, style: .bgr32), TableFormat(width: 40, height: 40, style: .bgra32)]
        let (_, reference) = try render(.file(original), specs)
        let (report, slots) = try render(.file(cmyk), specs)
        #expect(report.source.isCMYK && report.decodes == 1)
        // Orientation survives the CMYK path too (the file keeps the EXIF tag 6).
        #expect(report.source.orientation == 6 && report.source.width == 1800)
        for i in 0..<2 {
            let d = Difference({ slots[i].rgba($0, $1) }, { reference[i].rgba($0, $1) }, width: specs[i].width, height: specs[i].height)
            // The CMYK round trip loses gamut: measured mean ≈ 5 for vips itself.
            #expect(d.mean <= 7, "CMYK member \(i): \(d)")
        }
    }

    /// A CMYK TIFF (libvips' route for CMYK that is no JPEG) is block-shrunk as it is converted,
    /// to the scale a JPEG would be decoded at: a 12000² one held the whole converted image,
    /// 1.3 GB in a worker. Its pixels stay those of the sRGB image drawn whole.
    @Test func aCMYKTIFFIsShrunkAsItIsConverted() throws {
        let dir = try TemporaryDirectory()
        let cmykJPEG = dir.file("cmyk.jpg"), cmyk = dir.file("cmyk.tif"), srgb = dir.file("srgb.png")
        try Reference.jpegWithProfile(Corpus.photo("Landscape_1.jpg"), profile: "cmyk", to: cmykJPEG)
        try Reference.convert(cmykJPEG, to: cmyk)
        try Reference.sRGB(cmyk, to: srgb)
        let specs = [TableFormat(width: 120, height: 80, style: .bgr32), TableFormat(width: 40, height: 40, style: .bgra32)]
        let (report, slots) = try render(.file(cmyk), specs)
        #expect(report.source.isCMYK && report.source.loader.hasPrefix("tiffload"), "\(report.source)")
        // 1800×1200 (stored) to 120 wide: a scale of 1/15, decoded at 1/4.
        #expect(report.source.decodedWidth * 4 == report.source.width || report.source.decodedHeight * 4 == report.source.width,
                "\(report.source)")
        let (_, reference) = try render(.file(srgb), specs)
        for i in 0..<2 {
            let d = Difference({ slots[i].rgba($0, $1) }, { reference[i].rgba($0, $1) }, width: specs[i].width, height: specs[i].height)
            #expect(d.mean <= 1.0, "CMYK TIFF member \(i): \(d)")
        }
        // With alpha, not shrunk: a block mean of straight colour darkens transparent edges.
        let alpha = dir.file("cmyk-alpha.tif")
        try Reference.withBand(cmyk, value: 255, to: alpha)
        let (withAlpha, _) = try render(.file(alpha), specs)
        #expect(withAlpha.source.isCMYK && withAlpha.source.hasAlpha && withAlpha.source.decodedWidth == withAlpha.source.width,
                "\(withAlpha.source)")
    }

    @Test func sixteenBitGreyAndPaletteSourcesBecomeEightBitSRGB() throws {
        let dir = "\(Corpus.root)/pngsuite/png"
        var bandsCompared: [Int] = []
        for name in ["basn0g16.png", "basn2c16.png", "basn4a16.png", "basn6a16.png", "basn3p08.png", "basn0g01.png", "basn4a08.png"] {
            let reference = try Reference.thumbnail("\(dir)/\(name)", width: 32, height: 32, .inside)
            let (_, slots) = try render(.file("\(dir)/\(name)"), [TableFormat(width: 32, height: 32, style: .bgr32, background: .black)])
            // vips_thumbnail keeps grey as one band (two with alpha) and alpha unflattened: the
            // reference is flattened onto black here, as the 32BitBGR slot is.
            let bands = reference.bands
            let flattened = { (x: Int, y: Int) -> [Int] in
                let v: [Int] = reference.pixel(x, y)
                let colour: [Int] = bands <= 2 ? [v[0], v[0], v[0]] : [v[0], v[1], v[2]]
                guard bands == 2 || bands == 4 else { return colour }
                let alpha: Int = v[bands - 1]
                return colour.map { ($0 * alpha + 127) / 255 }
            }
            let d = Difference({ slots[0].rgba($0, $1) }, flattened, width: 32, height: 32)
            #expect(d.mean <= 1.0, "\(name): \(d)")
            bandsCompared.append(reference.bands)
        }
        #expect(bandsCompared == [1, 3, 2, 4, 3, 1, 2], "every file compared, grey and alpha included")
    }

    /// libvips ignores an AVIF's colour code points (`nclx`): harmless, and not said, for sRGB's
    /// or unspecified ones; said for Display P3's (primaries 12), whose pixels it draws as sRGB.
    @Test func anNCLXBoxIsBenignOnlyForSRGB() {
        func box(primaries: UInt8, transfer: UInt8) -> [UInt8] {
            [0, 0, 0, 0x13] + Array("ftypavif".utf8) + [0, 0, 0, 19] + Array("colrnclx".utf8) + [0, primaries, 0, transfer, 0, 6, 0x80]
        }
        let warnings = ["heifload: ignoring nclx profile", "source: bad seek to 1234", "VipsJpeg: Corrupt JPEG data"]
        let srgb = box(primaries: 1, transfer: 13).withUnsafeBytes { BenignWarnings.filter(warnings, bytes: $0) }
        #expect(srgb == ["VipsJpeg: Corrupt JPEG data"])
        let p3 = box(primaries: 12, transfer: 13).withUnsafeBytes { BenignWarnings.filter(warnings, bytes: $0) }
        #expect(p3 == ["heifload: ignoring nclx profile", "VipsJpeg: Corrupt JPEG data"])
        #expect(box(primaries: 2, transfer: 2).withUnsafeBytes { BenignWarnings.nclxIsSRGB($0) })
        #expect(![UInt8](repeating: 0, count: 40).withUnsafeBytes { BenignWarnings.nclxIsSRGB($0) })
    }

    /// Each allowed format decodes (converted from a corpus photo by libvips); formats outside the
    /// allow-list are refused as unsupported.
    @Test func allowedFormatsRenderAndOthersAreRefused() throws {
        let dir = try TemporaryDirectory()
        // A 360×240 lossless copy keeps the encoders (AV1 above all) fast.
        let original = dir.file("small.png")
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: original, maxSize: 360)
        let spec = TableFormat(width: 120, height: 80, style: .bgr32)
        let (_, reference) = try render(.file(original), [spec])
        for (suffix, loader, tolerance) in [("webp", "webpload", 6.0), ("gif", "gifload", 4.0), ("tif", "tiffload", 1.0), ("avif", "heifload", 6.0), ("png", "pngload", 1.0)] {
            let path = dir.file("photo.\(suffix)")
            do { try Reference.convert(original, to: path) } catch {
                Issue.record("libvips could not write .\(suffix) here: \(error)")
                continue
            }
            let (report, slots) = try render(.file(path), [spec])
            #expect(report.source.loader.hasPrefix(loader), "\(suffix): \(report.source.loader)")
            // A sound file warns of nothing: every AVIF said "source: bad seek to …" and
            // "heifload: ignoring nclx profile" (of its sRGB code points).
            #expect(report.warnings.isEmpty, "\(suffix): \(report.warnings)")
            let d = Difference({ slots[0].rgba($0, $1) }, { reference[0].rgba($0, $1) }, width: 120, height: 80)
            // Lossy encoders (WebP, AVIF at default quality; GIF's 256 colours) differ from the
            // original; a wrong decode (channels, orientation, garbage) scores above 20.
            #expect(d.mean <= tolerance, "\(suffix): \(d)")
            print("[formats] \(suffix): \(d)")
        }
        for suffix in ["ppm", "v", "csv"] {
            let path = dir.file("photo.\(suffix)")
            try Reference.convert(original, to: path)
            #expect(throws: ImageTableError.self) { try render(.file(path), [spec]) }
            do { _ = try render(.file(path), [spec]) } catch {
                #expect(error.code == .unsupportedFormat, "\(suffix): \(error)")
            }
        }
    }
}

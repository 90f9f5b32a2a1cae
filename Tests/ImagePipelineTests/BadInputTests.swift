import Foundation
import ImagePipeline
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
import ImageTableCore
#endif

/// Bad sources fail with a typed error that names them, and never crash or hang.
///
/// Run in parallel, as the whole suite's other renders are: the words checked here are each
/// render's own even so (libvips' shared error buffer, `LibvipsGate`).
@Suite struct BadInputTests {
    static let spec = [TableFormat(width: 64, height: 64, style: .bgra32), TableFormat(width: 32, height: 32, style: .bgr16)]

    static func failure(_ source: SourceImage, renderer: ImageRenderer = ImageRenderer()) -> ImageTableError? {
        do {
            _ = try render(source, spec, renderer: renderer)
            return nil
        } catch {
            return error
        }
    }

    static func expectFailure(_ path: String, _ code: ImageTableError.Code, _ label: String) {
        let error = failure(.file(path))
        print("[bad input] \(label): \(error.map(String.init(describing:)) ?? "no error")")
        #expect(error?.code == code, "\(label): \(String(describing: error))")
        #expect(error?.path == path, "\(label) should name the file")
        #expect(error.map { !$0.message.isEmpty && $0.description.contains(path) } == true)
    }

    @Test func truncatedFiles() throws {
        let dir = try TemporaryDirectory()
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1.jpg")))
        let truncatedJPEG = try dir.write("truncated.jpg", Array(jpeg.prefix(jpeg.count / 3)))
        Self.expectFailure(truncatedJPEG, .truncated, "truncated JPEG")

        let png = dir.file("photo.png")
        try Reference.png(Corpus.photo("Landscape_1.jpg"), to: png)
        let pngBytes = try Data(contentsOf: URL(fileURLWithPath: png))
        let truncatedPNG = try dir.write("truncated.png", Array(pngBytes.prefix(pngBytes.count / 2)))
        Self.expectFailure(truncatedPNG, .truncated, "truncated PNG")
        // Cut inside the header: still a clear error, not a crash.
        Self.expectFailure(try dir.write("stub.png", Array(pngBytes.prefix(20))), .truncated, "PNG cut in its header")
        // A TIFF whose directory comes last (Pillow's, libtiff's) lost it when cut: libvips then
        // named the last loader it tried ("unsupported-format: magickload_buffer: operation is
        // blocked"). One whose directory comes first (made here by moving it) lost its last
        // strips ("decode-failed: TIFFFillStrip: Read error").
        let tiff = dir.file("photo.tif")
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: tiff, maxSize: 300)
        let tiffBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tiff)))
        let directory = tiffBytes.withUnsafeBytes { Int($0.load(fromByteOffset: 4, as: UInt32.self).littleEndian) }
        #expect(Array(tiffBytes.prefix(2)) == [0x49, 0x49] && directory > tiffBytes.count / 2, "a directory at \(directory)")
        Self.expectFailure(try dir.write("cut.tif", Array(tiffBytes.prefix(tiffBytes.count / 2))), .truncated, "TIFF cut before its directory")
        #expect(Self.failure(.file(tiff)) == nil)
        // The directory moved to the front (entries pointing past 8 are unchanged): then cut.
        let count = Int(tiffBytes[directory]) | Int(tiffBytes[directory + 1]) << 8
        let entries = Array(tiffBytes[directory..<(directory + 2 + count * 12 + 4)])
        var front = Array(tiffBytes.prefix(8)) + Array(tiffBytes[8..<directory])
        front.replaceSubrange(8..<8 + entries.count, with: entries)  // over the first pixels: a test, not a picture
        front[4] = 8; front[5] = 0; front[6] = 0; front[7] = 0
        Self.expectFailure(try dir.write("cut-strips.tif", Array(front.prefix(front.count * 3 / 4))), .truncated, "TIFF cut in its strips")
        // A sound TIFF refused for what it holds keeps its own words (five bands), not a
        // damaged directory's.
        let fiveBands = dir.file("five.tif")
        try Reference.withBand(dir.file("photo.png"), value: 7, to: dir.file("four.tif"))
        try Reference.withBand(dir.file("four.tif"), value: 9, to: fiveBands)
        let refused = Self.failure(.file(fiveBands))
        #expect(refused?.code == .unsupportedFormat && refused?.message.contains("5 bands") == true, "\(String(describing: refused))")
        // The strictest level still renders a good file.
        let strict = ImageRenderer(options: DecodeOptions(failOn: .warning))
        #expect(Self.failure(.file(Corpus.photo("Landscape_1.jpg")), renderer: strict) == nil)
    }

    /// A restart interval declared (DRI) over data without restart markers: libjpeg first warns
    /// of bytes it skips, then that the data ended before the scan did. The file fails as
    /// `truncated`, and says the second, which made it so (its cause was the first).
    @Test func aTruncatedJPEGSaysTheWarningThatMadeItSo() throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1.jpg"))))
        let sos = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        bytes.insert(contentsOf: [0xFF, 0xDD, 0x00, 0x04, 0x00, 0x05], at: sos)
        let error = Self.failure(.data(Data(bytes), name: "dri.jpg"))
        #expect(error?.code == .truncated && error?.cause == "libjpeg: Corrupt JPEG data: premature end of data segment", "\(String(describing: error))")
    }

    /// Damage in a JPEG's last scan that no row shows: libjpeg says so only as it reads on to the
    /// end marker ("15 extraneous bytes before marker 0xd9"), which libvips never does, so
    /// `failOn: warning` baked a photo whose bottom was garbage. Refused at that level now; below
    /// it, baked as before, with the warning.
    @Test func damageSaidOnlyAtTheEndOfTheFileIsAWarning() throws {
        let source = try Self.flippedInItsLastScan(Corpus.photo("Landscape_1.jpg"), name: "flipped.jpg")
        let strict = ImageRenderer(options: DecodeOptions(failOn: .warning))
        let refused = Self.failure(source, renderer: strict)
        #expect(refused?.code == .decodeFailed && refused?.cause == "libjpeg: Corrupt JPEG data: 15 extraneous bytes before marker 0xd9",
                "\(String(describing: refused))")
        let (report, _) = try render(source, [TableFormat(width: 64, height: 64, style: .bgr32)])
        #expect(report.source.loader == "libjpeg" && report.warnings == ["libjpeg: Corrupt JPEG data: 15 extraneous bytes before marker 0xd9"],
                "\(report.warnings)")
    }

    /// Damage after the last row of a JPEG that libvips decodes (CMYK, a grey JPEG with an RGB
    /// profile): libvips never reads past the last row, so the strictest level baked it; now
    /// libjpeg reads such a file to its end after libvips at that level, as the direct path's own
    /// decode does at every level. Garbage before the end marker is a warning; garbage and a
    /// marker libjpeg cannot read, or a second frame header, are errors, worse still: refused too
    /// (they were baked without a word while the garbage alone was refused).
    @Test(arguments: ["cmyk", "grey with an RGB profile"])
    func damageAtTheEndOfAJPEGLibvipsDecodesIsRefusedAtTheStrictestLevel(_ kind: String) throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("sound.jpg")
        try Reference.jpegWithProfile(Corpus.photo("Landscape_1.jpg"), profile: kind == "cmyk" ? "cmyk" : "p3", to: file)
        if kind != "cmyk" {
            // A grey JPEG carrying the P3 profile: libvips ignores it, and says so (our warning).
            try Reference.greyJPEG(Corpus.photo("Landscape_1.jpg"), to: dir.file("grey.jpg"))
            let grey = try Data(contentsOf: URL(fileURLWithPath: dir.file("grey.jpg")))
            try Reference.inserting(segment: try Reference.iccSegment(of: file), into: grey).write(to: URL(fileURLWithPath: file))
        }
        let strict = ImageRenderer(options: DecodeOptions(failOn: .warning))
        let (clean, cleanSlots) = try render(.file(file), [TableFormat(width: 64, height: 64, style: .bgr32)], renderer: strict)
        #expect(clean.source.loader == "jpegload_source" && clean.warnings.allSatisfy { $0.contains("ICC profile") }, "\(clean.warnings)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        try #require(Array(bytes.suffix(2)) == [0xFF, 0xD9])
        let garbage = [UInt8](repeating: 0x5A, count: 15)
        // A frame header (SOF0) for 8×8, one component.
        let frame: [UInt8] = [0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00]
        for (damage, cause) in [(garbage, "extraneous bytes before marker 0xd9"), (garbage + [0xFF, 0x02], "extraneous bytes before marker 0x02"),
                                (frame, "Invalid JPEG file structure: two SOF markers")] {
            var damaged = bytes
            damaged.insert(contentsOf: damage, at: damaged.count - 2)
            let source = SourceImage.data(Data(damaged), name: "damaged.jpg")
            let refused = Self.failure(source, renderer: strict)
            #expect(refused?.code == .decodeFailed && refused?.cause?.hasPrefix("libjpeg: ") == true && refused?.cause?.hasSuffix(cause) == true,
                    "\(kind), \(cause): \(String(describing: refused))")
            // Below it, baked as before (not read again: nothing said), the sound file's pixels.
            let (report, slots) = try render(source, [TableFormat(width: 64, height: 64, style: .bgr32)])
            #expect(report.source.loader == "jpegload_source" && report.warnings == clean.warnings, "\(report.warnings)")
            #expect(Array(slots[0].buffer) == Array(cleanSlots[0].buffer))
        }
    }

    /// `path`'s bytes with 20 bytes flipped a third of the way into its scan data, which a
    /// baseline JPEG's last rows do not show: libjpeg warns only as it reads on to the end.
    static func flippedInItsLastScan(_ path: String, name: String) throws -> SourceImage {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let sos = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        let start = sos + 2 + (Int(bytes[sos + 2]) << 8 | Int(bytes[sos + 3]))
        let at = start + (bytes.count - start) / 3
        for k in 0..<20 { bytes[at + k * 7] ^= 0x55 }
        return .data(Data(bytes), name: name)
    }

    /// A GIF whose first frame's data ends before its last pixel, the file closed properly after
    /// it: libnsgif drew the missing rows (transparent or background) at every fail level and
    /// said nothing, so such a file was baked as a picture it is not. Now `truncated`, counted
    /// from the frame's LZW codes; a code the table does not hold is still libnsgif's to refuse.
    @Test func aGIFWhoseFirstFrameEndsEarlyIsTruncated() throws {
        let dir = try TemporaryDirectory()
        let gif = dir.file("photo.gif")
        try Reference.convert(Corpus.photo("Landscape_1.jpg"), to: gif, maxSize: 120)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: gif)))
        #expect(Self.failure(.file(gif)) == nil)
        // The first frame's sub-blocks: after the screen's colour table, extensions, the image
        // descriptor (and its own table) and the LZW minimum code size.
        var at = 13 + (bytes[10] & 0x80 != 0 ? 3 << (Int(bytes[10] & 7) + 1) : 0)
        while bytes[at] == 0x21 {
            at += 2
            while bytes[at] != 0 { at += Int(bytes[at]) + 1 }
            at += 1
        }
        try #require(bytes[at] == 0x2C)
        let pixels = (Int(bytes[at + 5]) | Int(bytes[at + 6]) << 8) * (Int(bytes[at + 7]) | Int(bytes[at + 8]) << 8)
        at += 10 + (bytes[at + 9] & 0x80 != 0 ? 3 << (Int(bytes[at + 9] & 7) + 1) : 0) + 1
        var blocks: [Int] = []
        while bytes[at] != 0 {
            blocks.append(at)
            at += Int(bytes[at]) + 1
        }
        try #require(blocks.count >= 4)
        let closed = Array(bytes.prefix(blocks[blocks.count / 2])) + [0x00, 0x3B]
        let early = Self.failure(.data(Data(closed), name: "early.gif"))
        #expect(early?.code == .truncated && early?.cause?.hasPrefix("the GIF's first frame's data ends after ") == true
                && early?.cause?.hasSuffix(" of its \(pixels) pixels") == true, "\(String(describing: early))")
        let renderer = ImageRenderer(options: DecodeOptions(failOn: .truncated))
        #expect(Self.failure(.data(Data(closed), name: "early.gif"), renderer: renderer)?.code == .truncated)

        // 4 × 4, four colours; codes of 3 bits: clear (4), 0, 0, end of information (5).
        let screen: [UInt8] = Array("GIF89a".utf8) + [4, 0, 4, 0, 0x81, 0, 0, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
        func frame(_ data: [UInt8]) -> Data { Data(screen + [0x2C, 0, 0, 0, 0, 4, 0, 4, 0, 0, 2, UInt8(data.count)] + data + [0x00, 0x3B]) }
        let endCode = Self.failure(.data(frame([0x04, 0x0A]), name: "end.gif"))
        #expect(endCode?.code == .truncated && endCode?.cause == "the GIF's first frame's data ends after 2 of its 16 pixels",
                "\(String(describing: endCode))")
        // Clear, 0, then 7 where the table's next code is 6: libnsgif's "Invalid frame data" (its
        // words can mix with another render's failing at once in this process: PIPELINE.md).
        let badCode = Self.failure(.data(frame([0xC4, 0x0B]), name: "bad.gif"))
        #expect(badCode != nil && badCode?.cause?.contains("GIF's first frame") != true, "\(String(describing: badCode))")
    }

    @Test func emptyNonImageAndUnreadableFiles() throws {
        let dir = try TemporaryDirectory()
        Self.expectFailure(try dir.write("empty.jpg", []), .empty, "zero-byte file")
        Self.expectFailure(try dir.write("notes.jpg", Array("just some text, not an image\n".utf8)), .unsupportedFormat, "text file")
        Self.expectFailure(try dir.write("random.png", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }), .unsupportedFormat, "noise")
        Self.expectFailure(dir.file("missing.jpg"), .unreadable, "missing file")
        Self.expectFailure(dir.path, .unreadable, "directory")
        let fifo = dir.file("fifo.jpg")
        #expect(mkfifo(fifo, 0o600) == 0)
        Self.expectFailure(fifo, .unreadable, "FIFO")
        // Blocked formats (SVG is an "untrusted" loader in libvips) are unsupported.
        let svg = try dir.write("image.svg", Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#.utf8))
        Self.expectFailure(svg, .unsupportedFormat, "SVG")
        if geteuid() != 0 {
            let locked = try dir.write("locked.jpg", Array(try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1.jpg")))))
            chmod(locked, 0)
            Self.expectFailure(locked, .unreadable, "file without read permission")
        }
        #expect(Self.failure(.data(Data(), name: "empty-bytes"))?.code == .empty)
    }

    @Test func decompressionBombsAreRefusedBeforeDecoding() throws {
        let dir = try TemporaryDirectory()
        // A PNG that declares 20000 × 20000 (400 Mpx) and carries almost no data.
        let bomb = try dir.write("bomb.png", PNGWriter.headerOnly(width: 20000, height: 20000))
        let renderer = ImageRenderer()
        let error = Self.failure(.file(bomb), renderer: renderer)
        #expect(error?.code == .tooManyPixels && error?.path == bomb, "\(String(describing: error))")
        #expect(renderer.decodeCount == 0, "the bomb must be refused from its header, before decoding")
        // The limit is an option: a 1800 × 1200 photo is over a 1-megapixel limit.
        let small = ImageRenderer(options: DecodeOptions(maxPixels: 1_000_000))
        #expect(Self.failure(.file(Corpus.photo("Landscape_1.jpg")), renderer: small)?.code == .tooManyPixels)
        #expect(small.decodeCount == 0)
        // And the byte limit.
        let tiny = ImageRenderer(options: DecodeOptions(maxSourceBytes: 1000))
        #expect(Self.failure(.file(Corpus.photo("Landscape_1.jpg")), renderer: tiny)?.code == .sourceTooLarge)
    }

    @Test func aFailureLeavesTheRendererUsable() throws {
        let renderer = ImageRenderer()
        let dir = try TemporaryDirectory()
        let bad = try dir.write("bad.jpg", Array("nope".utf8))
        for _ in 0..<3 {
            #expect(Self.failure(.file(bad), renderer: renderer) != nil)
            #expect(Self.failure(.file(Corpus.photo("Portrait_1.jpg")), renderer: renderer) == nil)
        }
    }
}

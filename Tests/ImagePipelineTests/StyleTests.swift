import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// Exact bytes: premultiplied alpha, 5-5-5 packing, the grey formula, flattening, letterboxing,
/// corners, upscaling and row padding, on fixtures whose pixels are known.
@Suite struct StyleTests {
    /// A `width` × `height` RGBA image filled per pixel by `colour`.
    static func png(_ width: Int, _ height: Int, _ colour: (Int, Int) -> [UInt8]) -> [UInt8] {
        var pixels: [UInt8] = []
        for y in 0..<height { for x in 0..<width { pixels += colour(x, y) } }
        return PNGWriter.encode(width: width, height: height, channels: 4, pixels: pixels)
    }

    static func data(_ bytes: [UInt8], _ name: String) -> SourceImage { .data(Data(bytes), name: name) }

    @Test func semiTransparentPixelIsPremultipliedExactly() throws {
        let source = Self.data(Self.png(64, 64) { _, _ in [255, 0, 0, 128] }, "half-red.png")
        let (report, slots) = try render(source, [
            TableFormat(width: 32, height: 32, style: .bgra32),
            TableFormat(width: 32, height: 32, style: .bgr32, background: .white),
            TableFormat(width: 32, height: 32, style: .grayscale8, background: .black),
        ])
        #expect(report.source.hasAlpha)
        for y in 0..<32 {
            for x in 0..<32 {
                // 255 × 128 / 255 = 128: B, G, R, A.
                #expect(slots[0].bytes(x, y) == [0, 0, 128, 128])
                // Over white: R = 128 + 255 × 127/255 = 255, G = B = 127.
                #expect(slots[1].bytes(x, y) == [127, 127, 255, 255])
                // Over black: (128, 0, 0) → (77 × 128 + 128) >> 8 = 39.
                #expect(slots[2].bytes(x, y) == [39])
            }
        }
        #expect(slots.allSatisfy { $0.paddingIsZero })
    }

    /// Opaque red next to fully transparent green: resizing straight alpha would bleed green into
    /// the edge ("halo"); premultiplied resizing must not. Every channel stays ≤ alpha.
    @Test func noHaloAndChannelsNeverExceedAlpha() throws {
        let source = Self.data(Self.png(64, 64) { x, _ in x < 32 ? [255, 0, 0, 255] : [0, 255, 0, 0] }, "red-clear-green.png")
        let (_, slots) = try render(source, [
            TableFormat(width: 23, height: 23, style: .bgra32, fit: .fill),
            TableFormat(width: 23, height: 23, style: .bgr32, fit: .fill, background: .black),
        ])
        var edge = 0
        for y in 0..<23 {
            for x in 0..<23 {
                let p = slots[0].bytes(x, y)
                #expect(p[0] <= p[3] && p[1] <= p[3] && p[2] <= p[3], "channel above alpha at \(x),\(y): \(p)")
                #expect(p[1] == 0, "green bled into \(x),\(y): \(p)")
                #expect(slots[1].bytes(x, y)[1] == 0, "green bled into the flattened member at \(x),\(y)")
                if p[3] > 0 && p[3] < 255 { edge += 1 }
            }
        }
        #expect(edge > 0, "the resize should leave a soft edge to test")
    }

    /// Lanczos-3 rings, and not alike in colour and alpha: unpremultiplied, a colour beside an
    /// edge of alpha came out above 255 (or at alpha 0, above 0), and premultiplied again it was
    /// above its alpha (`(24, 24, 18, 10)` in PngSuite's `tbrn2c08`). Every colour stays ≤ its
    /// alpha, for PngSuite's images with alpha and a hard-edged pattern, at every fit and two
    /// sizes.
    @Test func ringingNeverLiftsColourAboveAlpha() throws {
        // Bright opaque, dark opaque and transparent (with colour) stripes of odd widths.
        let stripes = Self.png(61, 47) { x, y in
            switch (x + 2 * y) % 7 {
            case 0, 1: [255, 255, 255, 255]
            case 2: [0, 0, 0, 255]
            case 3: [255, 255, 0, 40]
            default: [255, 0, 255, 0]
            }
        }
        var sources: [(String, SourceImage)] = [("stripes", Self.data(stripes, "stripes.png"))]
        for name in ["basn6a08.png", "tbrn2c08.png", "tp1n3p08.png", "bgan6a08.png"] {
            sources.append((name, .file(Corpus.png(name))))
        }
        var translucent = 0
        for (name, source) in sources {
            for fit in Fit.allCases {
                let specs = [16, 75].map { TableFormat(width: $0, height: $0, style: .bgra32, fit: fit) }
                let (_, slots) = try render(source, specs)
                for slot in slots {
                    for y in 0..<slot.spec.height {
                        for x in 0..<slot.spec.width {
                            let p = slot.bytes(x, y)
                            #expect(p[0] <= p[3] && p[1] <= p[3] && p[2] <= p[3], "\(name) \(fit) \(slot.spec.width): \(x),\(y) \(p)")
                            if p[3] > 0 && p[3] < 255 { translucent += 1 }
                        }
                    }
                }
            }
        }
        #expect(translucent > 1000, "the sources should leave translucent pixels to test")
    }

    @Test func sixteenBitPacksExactly() throws {
        // Four flat 16×16 blocks: red, green, blue, grey 128; rendered at its own size.
        let colours: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [128, 128, 128, 255]]
        let opaque = Self.png(64, 16) { x, _ in colours[x / 16] }
        let (_, slots) = try render(Self.data(opaque, "blocks.png"), [
            TableFormat(width: 64, height: 16, style: .bgr16, fit: .fill),
            TableFormat(width: 64, height: 16, style: .grayscale8, fit: .fill),
            TableFormat(width: 64, height: 16, style: .bgr32, fit: .fill),
        ])
        // Little-endian 0RRRRRGGGGGBBBBB: red 0x7C00, green 0x03E0, blue 0x001F, grey 16/16/16 0x4210.
        let expected555: [[UInt8]] = [[0x00, 0x7C], [0xE0, 0x03], [0x1F, 0x00], [0x10, 0x42]]
        // BT.601 integer luma: (77R + 150G + 29B + 128) >> 8.
        let expectedGrey: [[UInt8]] = [[77], [149], [29], [128]]
        for block in 0..<4 {
            let x = block * 16 + 8, y = 8
            #expect(slots[0].bytes(x, y) == expected555[block], "block \(block)")
            #expect(slots[1].bytes(x, y) == expectedGrey[block], "block \(block)")
            #expect(slots[2].bytes(x, y) == [colours[block][2], colours[block][1], colours[block][0], 0xFF], "block \(block)")
        }
        // White and black extremes.
        let bw = Self.png(2, 1) { x, _ in x == 0 ? [255, 255, 255, 255] : [0, 0, 0, 255] }
        let (_, extremes) = try render(Self.data(bw, "bw.png"), [
            TableFormat(width: 2, height: 1, style: .bgr16, fit: .fill),
            TableFormat(width: 2, height: 1, style: .grayscale8, fit: .fill),
        ])
        #expect(extremes[0].bytes(0, 0) == [0xFF, 0x7F] && extremes[0].bytes(1, 0) == [0x00, 0x00])
        #expect(extremes[1].bytes(0, 0) == [255] && extremes[1].bytes(1, 0) == [0])
        #expect((slots + extremes).allSatisfy { $0.paddingIsZero })
    }

    @Test func rowPaddingIsZeroedForEveryStyle() throws {
        // Widths whose rows need padding in every style: 150 × 4 = 600 → 640, 150 × 2 → 320, 150 → 192.
        for style in PixelStyle.allCases {
            let (_, slots) = try render(.file(PixelTests.photo), [TableFormat(width: 150, height: 7, style: style)])
            #expect(slots[0].bytesPerRow > 150 * style.bytesPerPixel)
            #expect(slots[0].paddingIsZero, "\(style)")
        }
    }

    @Test func roundedCornersAreAntialiasedClips() throws {
        let photo = Corpus.photo("Landscape_1.jpg")
        let bg = RGBAColor(red: 0, green: 0, blue: 255)
        let (_, slots) = try render(.file(photo), [
            TableFormat(width: 100, height: 80, style: .bgra32, cornerRadius: 20),
            TableFormat(width: 100, height: 80, style: .bgr32, background: bg, cornerRadius: 20),
            TableFormat(width: 100, height: 80, style: .bgra32),
        ])
        let (round, flat, square) = (slots[0], slots[1], slots[2])
        for (x, y) in [(0, 0), (99, 0), (0, 79), (99, 79), (2, 2), (97, 77)] {
            #expect(round.bytes(x, y) == [0, 0, 0, 0], "corner \(x),\(y) should be transparent")
            #expect(flat.bytes(x, y) == [255, 0, 0, 255], "corner \(x),\(y) should be background")
        }
        // The middle and the edges' midpoints are untouched.
        for (x, y) in [(50, 40), (50, 0), (0, 40), (99, 40), (50, 79)] {
            #expect(round.bytes(x, y) == square.bytes(x, y), "\(x),\(y) should be unclipped")
        }
        // Along the arc, pixels are partly covered: antialiased, premultiplied.
        var partial = 0
        for y in 0..<20 {
            for x in 0..<20 {
                let p = round.bytes(x, y)
                #expect(p[0] <= p[3] && p[1] <= p[3] && p[2] <= p[3])
                if p[3] > 0 && p[3] < 255 { partial += 1 }
            }
        }
        #expect(partial >= 15, "expected an antialiased arc, got \(partial) partial pixels")
    }

    @Test func smallSourcesAreNotUpscaledUnlessAsked() throws {
        let small = Self.data(Self.png(40, 20) { _, _ in [200, 100, 50, 255] }, "small.png")
        let bg = RGBAColor(red: 1, green: 2, blue: 3)
        for fit in Fit.allCases {
            let (report, slots) = try render(small, [
                TableFormat(width: 100, height: 60, style: .bgra32, fit: fit),
                TableFormat(width: 100, height: 60, style: .bgr32, fit: fit, background: bg),
                TableFormat(width: 100, height: 60, style: .bgr32, fit: fit, upscale: true),
            ])
            // Without upscale: 40×20 centred at (30, 20); the rest transparent / background.
            let placed = PixelRect(x: 30, y: 20, width: 40, height: 20)
            #expect(slots[0].bytes(30, 20) == [50, 100, 200, 255] && slots[0].bytes(69, 39) == [50, 100, 200, 255], "\(fit)")
            #expect(slots[0].bytes(29, 20) == [0, 0, 0, 0] && slots[0].bytes(30, 19) == [0, 0, 0, 0], "\(fit)")
            #expect(slots[1].bytes(0, 0) == [3, 2, 1, 255] && slots[1].bytes(70, 40) == [3, 2, 1, 255], "\(fit)")
            #expect(report.members[0].contentRect == (fit == .inside ? placed : PixelRect(x: 0, y: 0, width: 100, height: 60)))
            // With upscale the image reaches the slot's edges: fully for cover and fill, on the
            // limiting axis for contain and inside (120×60 would overflow, so 100×50 centred).
            let top = fit == .contain || fit == .inside ? 5 : 0
            #expect(slots[2].bytes(0, top) == [50, 100, 200, 255] && slots[2].bytes(99, 59 - top) == [50, 100, 200, 255], "\(fit)")
        }
    }

    @Test func aSourceSmallerOnOneAxisIsCroppedOnTheOther() throws {
        // 100×400 into 150×150 cover without upscale: a 100×150 centre crop, centred.
        let tall = Self.data(Self.png(100, 400) { _, y in y < 125 || y >= 275 ? [255, 0, 0, 255] : [0, 0, 255, 255] }, "tall.png")
        let (report, slots) = try render(tall, [TableFormat(width: 150, height: 150, style: .bgra32)])
        #expect(report.members[0].contentRect == PixelRect(x: 0, y: 0, width: 150, height: 150))
        #expect(slots[0].bytes(24, 75) == [0, 0, 0, 0])
        // The centre crop keeps source rows 125..<275: all blue (B, G, R, A = 255, 0, 0, 255).
        #expect(slots[0].bytes(25, 0) == [255, 0, 0, 255])
        #expect(slots[0].bytes(124, 149) == [255, 0, 0, 255])
        #expect(slots[0].bytes(125, 75) == [0, 0, 0, 0])
    }

    @Test func specValidation() throws {
        let renderer = ImageRenderer()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 64)
        defer { buffer.deallocate() }
        let cases: [RenderTarget] = [
            RenderTarget(format: TableFormat(width: 0, height: 1, style: .bgra32), pixels: buffer, bytesPerRow: 64),
            RenderTarget(format: TableFormat(width: 4, height: 4, style: .bgra32), pixels: buffer, bytesPerRow: 15),
            RenderTarget(format: TableFormat(width: 20, height: 1, style: .bgra32), pixels: buffer, bytesPerRow: 64),
            RenderTarget(format: TableFormat(width: 1, height: 1, style: .bgra32, cornerRadius: -1), pixels: buffer, bytesPerRow: 64),
        ]
        for target in cases {
            #expect(throws: ImageTableError.self) { try renderer.render(.file(PixelTests.photo), into: [target]) }
            do { _ = try renderer.render(.file(PixelTests.photo), into: [target]) } catch {
                #expect(error.code == .invalidRequest && error.path == PixelTests.photo)
            }
        }
        #expect(renderer.decodeCount == 0)
    }

    @Test func hexColours() {
        #expect(RGBAColor(hex: "#fff") == .white)
        #expect(RGBAColor(hex: "102030") == nil, "CSS form: the # is required")
        #expect(RGBAColor(hex: "#0008") == RGBAColor(red: 0, green: 0, blue: 0, alpha: 0x88))
        #expect(RGBAColor(hex: "#10203040") == RGBAColor(red: 0x10, green: 0x20, blue: 0x30, alpha: 0x40))
        #expect(RGBAColor(hex: "#12345") == nil && RGBAColor(hex: "#ggg") == nil)
        #expect(RGBAColor(red: 1, green: 2, blue: 255).description == "#0102ffff")
        #expect(TableFormat(width: 1, height: 1, style: .bgra32).renderingSignature
            == "pipeline=9;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0")
    }
}

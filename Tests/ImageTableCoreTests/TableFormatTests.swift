import Foundation
import Testing
@testable import ImageTableCore

/// The one model of a table format: its names, its canonical text and what the hash covers.
@Suite struct TableFormatTests {
    static let formats: [TableFormat] = [
        TableFormat(name: "a", width: 1, height: 1, style: .bgra32, capacity: 1),
        TableFormat(name: "thumb", family: "photos", width: 150, height: 100, style: .bgr16, capacity: 400, protection: .complete,
                    scale: 2, rendering: RenderingOptions(fit: .inside, crop: .entropy, background: RGBAColor(hex: "#12345678")!,
                                                          cornerRadius: 24, upscale: true)),
        TableFormat(name: "g", family: "f", width: 7, height: 5, style: .grayscale8, capacity: 3,
                    protection: .completeUntilFirstUserAuthentication, rendering: RenderingOptions(cornerRadius: 2.5),
                    renderingVersion: 7),
        TableFormat(name: "x", width: 9, height: 9, style: .bgr32, capacity: 9, rendering: RenderingOptions(cornerRadius: 0.1)),
    ]

    @Test(arguments: formats)
    func canonicalTextRoundTrips(_ format: TableFormat) throws {
        let parsed = try TableFormat(canonicalParameters: format.canonicalParameters, scale: format.scale)
        #expect(parsed == format)
        #expect(parsed.parametersHash == format.parametersHash)
    }

    @Test func namesAndTheCanonicalTextAreTheDocumentedOnes() {
        let f = Self.formats[1]
        #expect(f.id == "thumb@2x" && f.fileName == "thumb@2x.imagetable")
        #expect(Self.formats[0].fileName == "a.imagetable")
        #expect(f.canonicalParameters == """
            imagetable/1
            name=thumb
            family=photos
            width=150
            height=100
            style=16BitBGR
            capacity=400
            protection=complete
            rendering=pipeline=9;fit=inside;crop=entropy;background=#12345678;radius=24;upscale=1

            """)
    }

    @Test func theScaleNamesTheFileButDecidesNoPixel() {
        var a = Self.formats[0], b = a
        b.scale = 3
        #expect(a.parametersHash == b.parametersHash && a.fileName != b.fileName)
        a.rendering.crop = .attention
        #expect(a.parametersHash != b.parametersHash)
    }

    @Test(arguments: [
        "", "imagetable/1\n", "imagetable/2\nname=a\nfamily=\nwidth=1\nheight=1\nstyle=32BitBGRA\ncapacity=1\nprotection=none\nrendering=pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0\n",
        "imagetable/1\nname=a\nfamily=\nwidth=1\nheight=1\nstyle=32BitRGBA\ncapacity=1\nprotection=none\nrendering=pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0\n",
        "imagetable/1\nname=a\nfamily=\nwidth=01\nheight=1\nstyle=32BitBGRA\ncapacity=1\nprotection=none\nrendering=pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0\n",
        "imagetable/1\nname=a\nfamily=\nwidth=1\nheight=1\nstyle=32BitBGRA\ncapacity=1\nprotection=none\nrendering=opaque\n",
        "imagetable/1\nname=a\nfamily=\nwidth=1\nheight=1\nstyle=32BitBGRA\ncapacity=1\nprotection=none\nrendering=pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=-1;upscale=0\n",
        "imagetable/1\nname=a\nfamily=\nwidth=1\nheight=1\nstyle=32BitBGRA\ncapacity=1\nprotection=none\nrendering=pipeline=1;fit=cover;crop=centre;background=#ffffffff;radius=0;upscale=0",
    ])
    func malformedTextIsRefused(_ text: String) {
        #expect(throws: ImageTableError.self) { try TableFormat(canonicalParameters: text) }
    }

    @Test func namesThatWouldMakeTheTextAmbiguousAreRefused() {
        for name in ["a\nfamily=b", "a@2x", "a/b", "", String(repeating: "n", count: 64)] {
            var f = Self.formats[0]
            f.name = name
            #expect(throws: ImageTableError.self, "\(name)") { try f.validate() }
        }
        var f = Self.formats[0]
        f.rendering.cornerRadius = .infinity
        #expect(throws: ImageTableError.self) { try f.validate() }
    }
}

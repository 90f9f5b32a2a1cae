import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// An entry depends only on its source and its family's formats: not on which of the family's
/// tables a bake happened to fill. (It did: with one table missing, the bake decoded for that
/// member alone, at another shrink-on-load scale and from other intermediates.)
@Suite struct DeterminismTests {
    static let formats = """
              big:
                size: 300x300
                style: 32BitBGRA
                maximumCount: 10
              mid:
                size: 120x96
                style: 32BitBGR
                maximumCount: 10
              small:
                size: 40x40
                style: 8BitGrayscale
                maximumCount: 10

        """

    /// A JPEG (the direct path) and a PNG (the libvips path) baked into three sizes; then one
    /// table at a time is deleted and baked again alone: its entries are the full bake's, byte
    /// for byte (pixel checksums, which `verify` ties to the pixels).
    @Test func aTableBakedAloneEqualsTheSameTableBakedWithItsFamily() throws {
        let project = try BakeProject(formats: Self.formats)
        try project.add("photo.jpg", from: Corpus.photo("Landscape_1.jpg"))
        let png = project.root + "/photo.png"
        let made = try run("/usr/bin/env", ["vips", "thumbnail", Corpus.photo("Portrait_6.jpg"), png, "900"])
        #expect(made.status == 0, "vips thumbnail: \(made.stderr)")
        try project.add("photo.png", from: png)
        let full = try project.bake()
        #expect(full.decoded == 2 && full.failed.isEmpty)
        let expected = try project.entries()
        #expect(expected.count == 3 && expected.values.allSatisfy { $0.count == 2 })
        for table in ["big.imagetable", "mid.imagetable", "small.imagetable"] {
            try FileManager.default.removeItem(atPath: project.tables + "/" + table)
            let again = try project.bake()
            #expect(again.decoded == 2, "\(table) was baked again")
            #expect(try project.entries()[table] == expected[table], "\(table) alone differs from \(table) with its family")
            #expect(TableVerifier.verify(path: project.tables + "/" + table).isValid)
        }
    }
}

import TestSupport
import Testing
import ImageTableCore
@testable import ImageManifest

/// Table names, sizes, formats and budgets.
@Suite struct PlanTests {
    private func plan(_ format: String, options: ValidationOptions = ValidationOptions()) throws -> ValidationReport {
        try check(manifest(format: format), options: options)
    }

    @Test func fastImageCacheDemo() throws {
        let report = ManifestValidator(options: ValidationOptions(root: Repository.root))
            .validate(fileAt: Repository.manifests + "/demo.yaml")
        let tables = try #require(report.manifest?.formats)
        #expect(tables.map(\.fileName) == ["FICDPhotoSquareImage32BitBGRA@2x.imagetable", "FICDPhotoSquareImage32BitBGR@2x.imagetable",
                                           "FICDPhotoSquareImage16BitBGR@2x.imagetable", "FICDPhotoSquareImage8BitGrayscale@2x.imagetable"])
        #expect(Set(tables.map(\.family)) == ["FICDPhotoImageFormatFamily"])
        #expect(tables.allSatisfy { $0.width == 150 && $0.height == 150 && $0.capacity == 400 && $0.scale == 2 })
        #expect(tables.map(\.style) == [.bgra32, .bgr32, .bgr16, .grayscale8])
        // 150 px × 4 B = 600, padded to 640; 640 × 150 = 96,000, padded to 98,304; the index of
        // 400 records ends at 512 + 102,400, then 2 × 1,024 buckets of 8 bytes: 119,296, padded
        // to 122,880; plus 400 slots.
        let layouts = try tables.map { try #require(Manifest.planLayout(of: $0)) }
        #expect(layouts.map(\.bytesPerRow) == [640, 640, 320, 192])
        #expect(layouts.map(\.slotStride) == [98_304, 98_304, 49_152, 32_768])
        #expect(layouts[0].maxFileBytes == 122_880 + 400 * 98_304)
        #expect(report.manifest?.totalMaxBytes == layouts.reduce(0) { $0 + $1.maxFileBytes })
        // Points × scale: the demo's 12-point corners are 24 pixels.
        #expect(tables.allSatisfy { $0.rendering.cornerRadius == 24 && $0.protection == ProtectionMode.none })
    }

    @Test func fileNamesFollowTheScale() throws {
        let report = try plan("size: 10x20\nscales: [3, 1, 2]\nstyle: 32BitBGR\nmaximumCount: 5")
        let manifest = try #require(report.manifest)
        let tables = manifest.formats
        #expect(tables.map(\.fileName) == ["small.imagetable", "small@2x.imagetable", "small@3x.imagetable"])
        #expect(tables.map(\.width) == [10, 20, 30])
        #expect(tables.map(\.height) == [20, 40, 60])
        let directory = String(report.file.dropLast("manifest.yaml".count))
        #expect(tables.map(manifest.displayPath(of:)) == tables.map { directory + "tables/" + $0.fileName })
    }

    @Test func renderingSignatureIsCanonical() throws {
        let report = try plan("size: 50x50\nscales: [2]\nstyle: 32BitBGRA\nmaximumCount: 5\ncornerRadius: 12")
        let table = try #require(report.manifest?.formats.first)
        #expect(table.renderingSignature
                == "pipeline=9;fit=cover;crop=centre;background=#ffffffff;radius=24;upscale=0")
        #expect(table == TableFormat(name: "small", family: "users", width: 100, height: 100, style: .bgra32, capacity: 5,
                                     protection: .none, scale: 2, rendering: RenderingOptions(cornerRadius: 24)))
        let fractional = try #require(try plan("size: 50x50\nstyle: 8BitGrayscale\nmaximumCount: 5\ncornerRadius: 2.5\nfit: contain\n"
                                               + "crop: center\nbackground: \"#ABC\"\nupscale: true").manifest?.formats.first)
        #expect(fractional.renderingSignature
                == "pipeline=9;fit=contain;crop=centre;background=#aabbccff;radius=2.5;upscale=1")
    }

    @Test(arguments: ["fit: fill", "crop: entropy", "background: \"#fffffe\"", "cornerRadius: 1", "upscale: true", "protection: complete",
                      "style: 32BitBGR", "maximumCount: 6", "size: 50x51"])
    func everyRenderingOptionChangesTheParameterHash(_ change: String) throws {
        let base = "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: 5"
        let key = String(change.prefix { $0 != ":" })
        let changed = base.split(separator: "\n").filter { !$0.hasPrefix(key + ":") }.joined(separator: "\n") + "\n" + change
        let a = try #require(try plan(base).manifest?.formats.first)
        let b = try #require(try plan(changed).manifest?.formats.first)
        #expect(a.parametersHash != b.parametersHash)
    }

    @Test func pipelineVersionIsPartOfTheSignature() throws {
        let format = try #require(try plan("size: 5x5\nstyle: 32BitBGRA\nmaximumCount: 5").manifest?.formats.first)
        var next = format
        next.renderingVersion = format.renderingVersion + 1
        #expect(next.renderingSignature.hasPrefix("pipeline=\(format.renderingVersion + 1);"))
        #expect(format.parametersHash != next.parametersHash)
    }

    @Test func diskBudget() throws {
        let format = "size: 150x150\nstyle: 32BitBGRA\nmaximumCount: 400"
        let total = 122_880 + 400 * 98_304
        #expect(try plan(format, options: ValidationOptions(maxDiskBytes: total)).isValid)
        let over = try plan(format, options: ValidationOptions(maxDiskBytes: total - 1))
        #expect(summary(over) == ["3:1 disk-budget-exceeded"])
        #expect(over.diagnostics[0].message.contains("(\(total) bytes)"))
    }

    @Test func tableLimitIsSixteenTiB() throws {
        // 4096 × 4 B rows × 4096 rows = 64 MiB a slot: 262,144 slots are 16 TiB; with the index
        // (76 MB of records and buckets), 262,142 fit and 262,143 do not.
        #expect(try plan("size: 4096x4096\nstyle: 32BitBGRA\nmaximumCount: 262142").isValid)
        #expect(summary(try plan("size: 4096x4096\nstyle: 32BitBGRA\nmaximumCount: 262143")) == ["7:7 table-too-large"])
    }
}

import Foundation
import ImageBake
import ImageCache
import ImageCacheVips
import ImageManifest
import ImageTableCore
import TestSupport
import Testing

/// Tables written by `imagetable bake` (its worker processes and the pipeline) are the cache's
/// tables: same file names, descriptors, keys and source IDs.
@Suite struct BakeInteropTests {
    /// The build products directory, found from the running test binary.
    static var workerPath: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("imagetable-worker").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("imagetable-worker").path
    }

    @Test func aBakedTableHitsWithoutFetchingAndAChangedFileIsRefetched() async throws {
        let root = NSTemporaryDirectory() + "imagecache-bake-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src/sub", withIntermediateDirectories: true)
        let sources = ["a.jpg": Corpus.photo("Landscape_8"), "sub/b.png": Corpus.png("basn6a08")]
        for (key, path) in sources { try FileManager.default.copyItem(atPath: path, toPath: root + "/src/" + key) }
        let yaml = """
            version: 1
            output: tables
            families:
              photos:
                sources: src
                formats:
                  thumb:
                    size: 16x16
                    scales: [1, 2]
                    style: 32BitBGRA
                    maximumCount: 10
                  strip:
                    size: 30x10
                    style: 16BitBGR
                    fit: inside
                    maximumCount: 10
            """
        try yaml.write(toFile: root + "/manifest.yaml", atomically: true, encoding: .utf8)
        let report = ManifestValidator(options: ValidationOptions()).validate(fileAt: root + "/manifest.yaml")
        let manifest = try #require(report.manifest, "\(report.diagnostics)")
        var options = BakeOptions(workerExecutable: Self.workerPath)
        options.jobs = 1
        options.durability = .processCrashOnly
        let summary = try Baker.bake(manifest, options: options)
        #expect(summary.decoded == 2 && summary.failed.isEmpty)

        let provider = TestProvider()
        let cache = try ImageCache(configuration: .init(manifest: manifest), provider: provider)
        defer { cache.close() }
        #expect(Set(cache.formats.map(\.id)) == ["thumb", "thumb@2x", "strip"])
        for (key, path) in sources {
            let entity = CacheEntity(key: key, sourceID: try CacheEntity.sourceID(contentsOf: path))
            for format in cache.formats {
                let image = try await cache.image(for: entity, format: format.id)
                let reader = try ImageTableReader(path: manifest.outputPath + "/" + format.fileName)
                let baked = try reader.withImage(forKey: key) { (Array($0.bytes), $0.contentRect) }
                #expect(image.copyPixels() == baked?.0 && image.contentRect == baked?.1, "\(key) \(format.id)")
            }
        }
        #expect(provider.calls == 0 && cache.statistics.hits == 6)

        // The file changed: its new fingerprint is stale in every table, so it is fetched once.
        let changed = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_1")))
        provider.set("a.jpg", .data(changed))
        let entity = CacheEntity(key: "a.jpg", sourceID: CacheEntity.sourceID(of: changed))
        _ = try await cache.image(for: entity, format: "thumb@2x")
        #expect(try cache.cachedImage(for: entity, format: "thumb") != nil && cache.cachedImage(for: entity, format: "strip") != nil)
        #expect(provider.calls == 1 && cache.statistics.decodes == 1)

        // Only the 2× tables, as an app on a 2× screen opens them.
        cache.close()
        let retina = try ImageCache(configuration: .init(manifest: manifest, scales: [2]), provider: provider)
        defer { retina.close() }
        #expect(retina.formats.map(\.id) == ["thumb@2x"])
        #expect(try retina.cachedImage(for: entity, format: "thumb@2x") != nil)
    }

    /// A cache that serves some of a family's scales draws as the bake does: a source is decoded
    /// once for the whole family, at the size its largest format needs, so the scales it does not
    /// serve still shape the pixels. Drawn without them, `@1x` differed from the bake's, and so did
    /// its family tag: every bake drew the cache's entries again, and `export` refused the table.
    @Test func aCacheOfSomeScalesDrawsAsTheBake() async throws {
        let root = NSTemporaryDirectory() + "imagecache-scales-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_1"), toPath: root + "/src/a.jpg")
        try "version: 1\noutput: tables\nfamilies:\n  photos:\n    sources: src\n    formats:\n      thumb:\n        size: 40x40\n        scales: [1, 2]\n        style: 32BitBGRA\n        maximumCount: 4\n"
            .write(toFile: root + "/manifest.yaml", atomically: true, encoding: .utf8)
        let report = ManifestValidator(options: ValidationOptions()).validate(fileAt: root + "/manifest.yaml")
        let manifest = try #require(report.manifest, "\(report.diagnostics)")
        var options = BakeOptions(workerExecutable: Self.workerPath)
        options.durability = .processCrashOnly
        #expect(try Baker.bake(manifest, options: options).decoded == 1)
        let baked = try ImageTableReader(path: manifest.outputPath + "/thumb.imagetable")
        let bakedEntry = try #require(baked.entry(forKey: "a.jpg"))
        let bakedPixels = try baked.withImage(forKey: "a.jpg") { Array($0.bytes) }

        let provider = TestProvider(["a.jpg": .photo("Landscape_1")])
        let cache = try ImageCache(configuration: .init(manifest: manifest, directory: root + "/cache", scales: [1]), provider: provider)
        defer { cache.close() }
        let entity = CacheEntity(key: "a.jpg", sourceID: try CacheEntity.sourceID(contentsOf: root + "/src/a.jpg"))
        let drawn = try await cache.image(for: entity, format: "thumb")
        let same = drawn.copyPixels() == bakedPixels
        #expect(same, "the cache's @1x pixels are the bake's")
        cache.close()
        #expect(try ImageTableReader(path: root + "/cache/thumb.imagetable").entry(forKey: "a.jpg")?.familyTag == bakedEntry.familyTag)
    }

    /// Every format option of docs/MANIFEST.md, each value at least once: the bake writes the
    /// tables and the cache, configured from the same manifest, opens every one of them without
    /// rebuilding it (its entries are there, nothing is fetched) because both derive the parameter
    /// hash from the same `TableFormat`.
    @Test func everyManifestOptionOpensWithoutARebuild() async throws {
        let root = NSTemporaryDirectory() + "imagecache-options-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.photo("Portrait_3"), toPath: root + "/src/p.jpg")
        try FileManager.default.copyItem(atPath: Corpus.png("basn6a08"), toPath: root + "/src/a.png")
        let formats: [(String, String)] = [
            ("plain", "size: 12x10\n        style: 32BitBGRA"),
            ("scaled", "size: [8, 6]\n        scales: [1, 2, 3]\n        style: 32BitBGR"),
            ("private", "size: 9x9\n        style: 16BitBGR\n        protection: complete"),
            ("group", "size: 9x9\n        style: 8BitGrayscale\n        protection: completeUntilFirstUserAuthentication"),
            ("contain", "size: 20x10\n        style: 32BitBGR\n        fit: contain\n        background: \"#1a2b3c\""),
            ("fill", "size: 20x10\n        style: 16BitBGR\n        fit: fill"),
            ("inside", "size: 20x10\n        style: 32BitBGRA\n        fit: inside"),
            ("attention", "size: 10x20\n        style: 32BitBGRA\n        crop: attention"),
            ("entropy", "size: 10x20\n        style: 8BitGrayscale\n        crop: entropy"),
            ("center", "size: 10x20\n        style: 32BitBGR\n        crop: center\n        background: \"#abcd\""),
            ("rounded", "size: 16x16\n        scales: 2\n        style: 32BitBGRA\n        cornerRadius: 2.5"),
            ("upscale", "size: 64x64\n        style: 32BitBGR\n        upscale: true\n        background: \"#00ff0080\""),
        ]
        let yaml = "version: 1\noutput: tables\nfamilies:\n  all:\n    sources: src\n    formats:\n"
            + formats.map { "      \($0.0):\n        \($0.1)\n        maximumCount: 7\n" }.joined()
        try yaml.write(toFile: root + "/manifest.yaml", atomically: true, encoding: .utf8)
        let report = ManifestValidator(options: ValidationOptions()).validate(fileAt: root + "/manifest.yaml")
        let manifest = try #require(report.manifest, "\(report.diagnostics)")
        var options = BakeOptions(workerExecutable: Self.workerPath)
        options.jobs = 1
        options.durability = .processCrashOnly
        let summary = try Baker.bake(manifest, options: options)
        #expect(summary.decoded == 2 && summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.tables.count == formats.count + 2, "three scales of one format")

        let provider = TestProvider()
        let cache = try ImageCache(configuration: .init(manifest: manifest), provider: provider)
        defer { cache.close() }
        for key in ["p.jpg", "a.png"] {
            let entity = CacheEntity(key: key, sourceID: try CacheEntity.sourceID(contentsOf: root + "/src/" + key))
            for format in cache.formats {
                #expect(try cache.cachedImage(for: entity, format: format.id) != nil, "\(key) in \(format.id) was rebuilt away")
            }
        }
        #expect(provider.calls == 0)
    }
}

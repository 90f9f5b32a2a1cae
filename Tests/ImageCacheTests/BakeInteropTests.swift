import Foundation
import ImageBake
import ImageCache
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
}

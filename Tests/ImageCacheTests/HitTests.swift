import Foundation
import ImageCache
import ImageCacheVips
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// Hits return the committed pixels; unknown keys and changed source IDs miss; a miss stores
/// what the pipeline draws.
@Suite struct HitTests {
    /// One format per style, each table pre-filled by the core with a known byte pattern.
    static let styleFormats = PixelStyle.allCases.map { style in
        TableFormat(name: "s\(style.code)", family: "styles", width: 7, height: 5, style: style, capacity: 8)
    }

    /// Distinct bytes in every pixel, zero row padding (what a write stores).
    static func pattern(_ layout: TableLayout, seed: Int) -> [UInt8] {
        let rowBytes = layout.width * layout.style.bytesPerPixel
        return (0..<layout.bytesPerRow * layout.height).map { i in
            i % layout.bytesPerRow < rowBytes ? UInt8(truncatingIfNeeded: i &* 31 &+ seed &* 7 &+ 1) : 0
        }
    }

    @Test func returnsExactlyTheCommittedPixelsForEveryStyle() async throws {
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = UUID()
        var written: [String: [UInt8]] = [:]
        for (i, format) in Self.styleFormats.enumerated() {
            let table = try ImageTableWriter(path: directory + "/" + format.fileName, format: format)
            let bytes = Self.pattern(table.layout, seed: i)
            try bytes.withUnsafeBytes { raw in
                _ = try table.write(key: "photo-1", sourceUUID: source, pixels: raw, contentRect: PixelRect(x: 1, y: 0, width: 5, height: 5))
            }
            written[format.id] = bytes
            table.close()
        }
        let fixture = try Fixture(formats: Self.styleFormats, directory: directory)
        let entity = CacheEntity(key: "photo-1", sourceID: source)
        for format in Self.styleFormats {
            let image = try await fixture.cache.image(for: entity, format: format.id)
            #expect(image.style == format.style && image.width == 7 && image.height == 5)
            #expect(image.contentRect == PixelRect(x: 1, y: 0, width: 5, height: 5))
            #expect(image.copyPixels() == written[format.id], "\(format.id)")
            let sync = try #require(try fixture.cache.cachedImage(for: entity, format: format.id))
            #expect(sync.withPixels { Array($0.bytes) } == written[format.id])
            #expect(try fixture.cache.withCachedPixels(for: entity, format: format.id) { Array($0.bytes) } == written[format.id])
            let stale = CacheEntity(key: "photo-1", sourceID: UUID())
            #expect(try fixture.cache.withCachedPixels(for: stale, format: format.id) { _ in 1 } == nil)
        }
        #expect(fixture.provider.calls == 0)
        // The stale lookups are misses, as a request's would be.
        #expect(fixture.cache.statistics.hits == 12 && fixture.cache.statistics.misses == 4)
    }

    @Test func unknownKeysAndChangedSourcesMissAndAChangedSourceIsFetched() async throws {
        let provider = TestProvider(["a": .photo("Landscape_1")])
        let fixture = try Fixture(provider: provider)
        let old = CacheEntity(key: "a", sourceName: "v1")
        let first = try await fixture.cache.image(for: old, format: "small")
        let oldPixels = try #require(first.copyPixels())
        #expect(provider.calls == 1)
        #expect(try fixture.cache.cachedImage(for: CacheEntity(key: "b", sourceName: "v1"), format: "small") == nil)

        let new = CacheEntity(key: "a", sourceName: "v2")
        #expect(try fixture.cache.cachedImage(for: new, format: "small") == nil, "another source ID is stale")
        #expect(try fixture.cache.containsImage(for: old, format: "small"))
        provider.set("a", .photo("Portrait_1"))
        let second = try await fixture.cache.image(for: new, format: "small")
        #expect(provider.calls == 2 && second.sourceID == new.sourceID)
        #expect(first.withPixels { _ in true } == nil, "the old handle's entry was replaced")
        // The new source's pixels, not the old ones kept under the new source ID.
        let newPixels = try #require(second.copyPixels())
        #expect(newPixels.count == oldPixels.count && newPixels != oldPixels)
        #expect(try fixture.cache.cachedImage(for: old, format: "small") == nil)
    }

    /// A miss stores, for every format of the family, what the pipeline draws from the source.
    @Test func aMissStoresWhatThePipelineDraws() async throws {
        let provider = TestProvider(["p": .photo("Portrait_6")])
        let fixture = try Fixture(provider: provider)
        let entity = CacheEntity(key: "p", sourceName: "1")
        let image = try await fixture.cache.image(for: entity, format: "small")
        let grey = try #require(try fixture.cache.cachedImage(for: entity, format: "grey"), "the family's other format was drawn too")
        #expect(fixture.cache.statistics.decodes == 1 && fixture.cache.statistics.stored == 2)
        #expect(try fixture.cache.cachedImage(for: entity, format: "icon") == nil, "another family is not drawn")

        // The reference: the same source rendered into both members in one call, as the cache
        // does (members derived from one shared decode differ slightly from separate renders).
        let handles = [image, grey]
        var small = [UInt8](repeating: 0, count: image.bytesPerRow * image.height)
        var luma = [UInt8](repeating: 0, count: grey.bytesPerRow * grey.height)
        let report = try small.withUnsafeMutableBytes { a in
            try luma.withUnsafeMutableBytes { b in
                try ImageRenderer().render(.file(Corpus.photo("Portrait_6")), into: [
                    RenderTarget(format: Fixture.formats[0], pixels: a, bytesPerRow: image.bytesPerRow),
                    RenderTarget(format: Fixture.formats[1], pixels: b, bytesPerRow: grey.bytesPerRow),
                ])
            }
        }
        for (i, expected) in [small, luma].enumerated() {
            #expect(handles[i].copyPixels() == expected, "\(handles[i].format)")
            #expect(handles[i].contentRect == report.members[i].contentRect)
        }
        #expect(grey.contentRect.height == 16 && grey.contentRect.width < 24, "inside keeps the portrait's shape")
    }

    @Test func unknownFormatsAndLongKeysAreTypedErrors() async throws {
        let fixture = try Fixture()
        let entity = CacheEntity(key: "a", sourceName: "1")
        let unknown = await #expect(throws: ImageTableError.self) { try await fixture.cache.image(for: entity, format: "huge") }
        #expect(unknown?.code == .unknownFormat && unknown?.message.contains("'huge'") == true)
        let long = CacheEntity(key: String(repeating: "k", count: 161), sourceName: "1")
        let invalid = await #expect(throws: ImageTableError.self) { try await fixture.cache.image(for: long, format: "small") }
        #expect(invalid?.code == .invalidRequest)
        #expect(fixture.provider.calls == 0, "nothing is fetched for a key no table can store")
    }

    @Test func aTableHeldByAnotherWriterIsReportedAsLocked() throws {
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let format = Fixture.formats[2]
        let writer = try ImageTableWriter(path: directory + "/" + format.fileName, format: format)
        defer { writer.close() }
        let error = #expect(throws: ImageTableError.self) {
            var configuration = ImageCache.Configuration.test(directory: directory, formats: [format])
            configuration.lockTimeout = 0.05
            _ = try ImageCache(configuration: configuration, provider: TestProvider())
        }
        #expect(error?.code == .locked, "the core's code, carried through")
    }
}

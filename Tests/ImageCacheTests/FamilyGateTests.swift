import Dispatch
import Foundation
import ImageCache
import ImageCacheVips
import ImageTableCore
import Synchronization
import Testing

/// A renderer that counts the renders running at once, each held long enough (30 ms) for the
/// others queued beside it to begin.
final class OverlapRenderer: Renderer {
    let inner = VipsRenderer()
    let running = Atomic<Int>(0)
    let most = Atomic<Int>(0)
    func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect] {
        let now = running.add(1, ordering: .relaxed).newValue
        defer { running.subtract(1, ordering: .relaxed) }
        most.max(now, ordering: .relaxed)
        usleep(30_000)
        return try inner.render(source, into: targets)
    }
}

@Suite struct FamilyGateTests {
    /// Two formats of one family with one slot each, two render threads, two keys asked for at
    /// once in a new cache: each render could take the free slot of one table before it decoded,
    /// then wait for the other's slot, and one failed with `busy` after 5 s. The family's renders
    /// now take turns, as many at once as its smallest table has slots (a wait that ended in
    /// `busy` fails a load here).
    @Test(arguments: [1, 2])
    func aFamilyOfFewerSlotsThanRenderThreadsRendersInTurns(slots: Int) async throws {
        let formats = [
            TableFormat(name: "a", family: "tiny", width: 16, height: 16, style: .bgra32, capacity: slots),
            TableFormat(name: "b", family: "tiny", width: 24, height: 24, style: .grayscale8, capacity: 8),
        ]
        let keys = (0..<4).map { "k\($0)" }
        for _ in 0..<3 {
            let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let renderer = OverlapRenderer()
            var configuration = ImageCache.Configuration.test(directory: directory, formats: formats)
            configuration.renderThreads = 3
            let provider = TestProvider(Dictionary(uniqueKeysWithValues: keys.map { ($0, .photo("Landscape_0")) }))
            let cache = try ImageCache(configuration: configuration, provider: provider, renderer: renderer)
            defer { cache.close() }
            let loads = keys.prefix(slots + 1).map { key in
                Task { try await cache.image(for: CacheEntity(key: key, sourceName: "1"), format: "b").key }
            }
            for (task, key) in zip(loads, keys) { #expect(try await task.value == key) }
            #expect(renderer.most.load(ordering: .relaxed) == slots, "\(renderer.most.load(ordering: .relaxed)) renders at once")
        }
    }

    /// A family whose tables have as many slots as there are render threads is not held back:
    /// its renders run side by side.
    @Test func aFamilyOfEnoughSlotsRendersSideBySide() async throws {
        let formats = [TableFormat(name: "a", family: "photos", width: 16, height: 16, style: .bgra32, capacity: 2)]
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let renderer = OverlapRenderer()
        var configuration = ImageCache.Configuration.test(directory: directory, formats: formats)
        configuration.renderThreads = 2
        let provider = TestProvider(["x": .photo("Landscape_0"), "y": .photo("Landscape_1")])
        let cache = try ImageCache(configuration: configuration, provider: provider, renderer: renderer)
        defer { cache.close() }
        async let x = cache.image(for: CacheEntity(key: "x", sourceName: "1"), format: "a").key
        async let y = cache.image(for: CacheEntity(key: "y", sourceName: "1"), format: "a").key
        #expect(try await [x, y] == ["x", "y"])
        #expect(renderer.most.load(ordering: .relaxed) == 2)
    }
}

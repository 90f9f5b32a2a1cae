import Foundation
@testable import ImageCache
import ImageCacheVips
import ImageTableCore
import Synchronization
import TestSupport
import Testing

/// Renders queue by priority, `close()` ends the fetches it leaves nothing to store for, a
/// provider's own error code stands, and a cancelled `setImage` draws nothing while it waits.
@Suite struct ClosePriorityTests {
    /// The pipeline's renderer, holding the first render at a gate, recording which source each
    /// render drew, in order.
    final class OrderRenderer: Renderer {
        let inner = GatedRenderer()
        let order = Mutex<[String]>([])
        func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect] {
            if case .file(let path) = source { order.withLock { $0.append(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent) } }
            return try inner.render(source, into: targets)
        }
    }

    /// A cache of one render thread over `renderer`, calling `provider`.
    static func cache(_ provider: any SourceProvider, renderer: any Renderer, directory: String) throws -> ImageCache {
        var configuration = ImageCache.Configuration.test(directory: directory, formats: Fixture.formats)
        configuration.renderThreads = 1
        return try ImageCache(configuration: configuration, provider: provider, renderer: renderer)
    }

    /// With a fast provider, prefetches' renders queue; a request made after them was rendered
    /// behind every one (in arrival order): it goes first, and so does a prefetch a request joins.
    @Test func aRequestIsRenderedBeforeQueuedPrefetches() async throws {
        let names = ["basn0g08", "basn2c08", "basn3p08", "basn4a08", "basn6a08"]
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: names.map { ($0, .file(Corpus.png($0))) }))
        let renderer = OrderRenderer()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Self.cache(provider, renderer: renderer, directory: directory)
        defer { cache.close() }
        let held = cache.prefetch(CacheEntity(key: names[0], sourceName: "1"), format: "small")
        #expect(await eventually { renderer.inner.started.load(ordering: .relaxed) == 1 })
        // Queued one at a time, so that their order is known.
        var prefetches: [Task<Void, any Error>] = []
        for (i, name) in names[1...3].enumerated() {
            prefetches.append(cache.prefetch(CacheEntity(key: name, sourceName: "1"), format: "small"))
            #expect(await eventually { cache.pool.queuedCount == i + 1 })
        }
        let now = Task(priority: .high) { try await cache.image(for: CacheEntity(key: names[4], sourceName: "1"), format: "small") }
        #expect(await eventually { cache.pool.queuedCount == 4 })
        let joining = Task(priority: .high) { try await cache.image(for: CacheEntity(key: names[3], sourceName: "1"), format: "grey") }
        #expect(await eventually { cache.statistics.joined == 1 })
        renderer.inner.gate.signal()
        _ = try await (now.value, joining.value)
        for prefetch in [held] + prefetches { try await prefetch.value }
        // The request's render came to the high level before the join raised the prefetch's.
        #expect(renderer.order.withLock { $0 } == [names[0], names[4], names[3], names[1], names[2]])
    }

    /// `close()` with fetches under way and waiting: the waiters fail at once, the provider call
    /// is cancelled, and no waiting fetch calls the provider (each downloaded whole, then failed).
    @Test func closeEndsTheFetchesItLeavesNothingToStoreFor() async throws {
        let provider = TestProvider(["a": .photo("Landscape_0"), "b": .photo("Landscape_1"), "c": .photo("Landscape_2")], gated: true)
        let fixture = try Fixture(provider: provider) { $0.maximumConcurrentFetches = 1 }
        let cache = fixture.cache
        final class Count: Sendable { let value = Atomic<Int>(0) }
        let ended = Count()
        let tasks = ["a", "b", "c"].map { key in
            Task {
                defer { ended.value.add(1, ordering: .relaxed) }
                return try await cache.image(for: CacheEntity(key: key, sourceName: "1"), format: "small")
            }
        }
        #expect(await eventually { provider.calls == 1 && cache.fetchLimiter.waitingCount == 2 })
        cache.close()
        // Before the provider answers (the gate opens only after, so that a regression fails
        // rather than hangs).
        #expect(await eventually(within: 120) { ended.value.load(ordering: .relaxed) == 3 })
        #expect(provider.cancellations == 1)
        provider.openGate()
        for task in tasks {
            let error = await cacheError(task)
            #expect(error?.code == .notWritable && error?.message == "the cache is closed" && error?.key != nil, "\(String(describing: error))")
        }
        #expect(await eventually { cache.fetchLimiter.waitingCount == 0 && cache.fetchLimiter.runningCount == 0 })
        #expect(provider.calls == 1)
    }

    /// A provider that throws an `ImageTableError` keeps its code (it became
    /// `source-unavailable`), and gets the request's key when it has none.
    @Test func aProvidersOwnCodeStands() async throws {
        struct Throwing: SourceProvider {
            func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
                throw ImageTableError(.truncated, "the download ended early")
            }
        }
        let fixture = try Fixture(source: Throwing())
        let error = await #expect(throws: ImageTableError.self) {
            try await fixture.cache.image(for: CacheEntity(key: "a", sourceName: "1"), format: "small")
        }
        #expect(error?.code == .truncated && error?.message == "the download ended early" && error?.key == "a")
    }

    /// A `setImage` cancelled while its render waits for the render thread draws nothing and
    /// throws `cancelled` (it was drawn and stored).
    @Test func aSetImageCancelledWhileQueuedDrawsNothing() async throws {
        let provider = TestProvider(["a": .photo("Landscape_0")])
        let renderer = GatedRenderer()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try Self.cache(provider, renderer: renderer, directory: directory)
        defer { cache.close() }
        let first = Task { try await cache.image(for: CacheEntity(key: "a", sourceName: "1"), format: "small") }
        #expect(await eventually { renderer.started.load(ordering: .relaxed) == 1 })
        let entity = CacheEntity(key: "b", sourceName: "1")
        let set = Task { try await cache.setImage(.photo("Landscape_1"), for: entity, format: "small") }
        #expect(await eventually { cache.pool.queuedCount == 1 })
        set.cancel()
        renderer.gate.signal()
        #expect(await cacheError(set)?.code == .cancelled)
        _ = try await first.value
        #expect(try cache.cachedImage(for: entity, format: "small") == nil && renderer.started.load(ordering: .relaxed) == 1)
    }
}

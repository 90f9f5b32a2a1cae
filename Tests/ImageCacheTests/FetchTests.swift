import Foundation
@testable import ImageCache
import ImageTableCore
import ImageCacheVips
import ImagePipeline
import Synchronization
import TestSupport
import Testing

/// Deduplication, cancellation and failures of fetches, with a counting provider that holds
/// every call at a gate until the test opens it. `statistics.joined` counts requests registered
/// with a fetch under way, so waiting for it proves that every request is waiting.
@Suite struct FetchTests {
    @Test func hundredConcurrentRequestsShareOneFetchAndOneDecode() async throws {
        let provider = TestProvider(["a": .photo("Landscape_3")], gated: true)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let entity = CacheEntity(key: "a", sourceName: "1")
        let tasks = (0..<100).map { i in
            Task { try await cache.image(for: entity, format: i % 2 == 0 ? "small" : "grey") }
        }
        #expect(await eventually { cache.statistics.joined == 99 && provider.calls == 1 })
        provider.openGate()
        var pixels: [String: Set<[UInt8]>] = [:]
        for task in tasks {
            let image = try await task.value
            pixels[image.format, default: []].insert(try #require(image.copyPixels()))
        }
        #expect(provider.calls == 1)
        #expect(cache.statistics.fetches == 1 && cache.statistics.decodes == 1 && cache.statistics.joined == 99)
        #expect(pixels["small"]?.count == 1 && pixels["grey"]?.count == 1, "every waiter sees the same entry")
    }

    /// Many sources at once, each asked for by several requests in both formats: one fetch and
    /// one decode per source, and every request gets its own source's entry.
    @Test func manySourcesAtOnceAreFetchedOnceEach() async throws {
        let names = ["basn0g08", "basn2c08", "basn3p08", "basn4a08", "basn6a08", "basi0g08", "basi2c08", "basi6a08",
                     "bgai4a08", "bgbn4a08", "f00n2c08", "f01n2c08", "s32n3p04", "tbbn3p08", "tbrn2c08", "z09n2c08"]
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: names.map { ($0, .file(Corpus.png($0))) }),
                                    gated: true)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let requests = names.flatMap { name in (0..<6).map { (CacheEntity(key: name, sourceName: "1"), $0 % 2 == 0 ? "small" : "grey") } }
        let tasks = requests.shuffled().map { entity, format in
            Task { (entity.key, try await cache.image(for: entity, format: format)) }
        }
        #expect(await eventually { cache.statistics.joined == requests.count - names.count })
        provider.openGate()
        for task in tasks {
            let (key, image) = try await task.value
            #expect(image.key == key && image.isCurrent)
        }
        #expect(provider.calls == names.count && cache.statistics.decodes == names.count)
        #expect(cache.statistics.stored == 2 * names.count)
    }

    @Test func twoFormatsOfOneFamilyShareOneFetchAndTheWholeFamilyIsDrawn() async throws {
        let provider = TestProvider(["a": .photo("Portrait_2")], gated: true)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let entity = CacheEntity(key: "a", sourceName: "1")
        let small = Task { try await cache.image(for: entity, format: "small") }
        let grey = Task { try await cache.image(for: entity, format: "grey") }
        #expect(await eventually { cache.statistics.joined == 1 })
        provider.openGate()
        _ = try await (small.value, grey.value)
        #expect(provider.calls == 1 && cache.statistics.decodes == 1)

        // One request draws the family's other format too, so asking for it later hits.
        let other = CacheEntity(key: "a", sourceName: "2")
        _ = try await cache.image(for: other, format: "small")
        #expect(try cache.cachedImage(for: other, format: "grey") != nil)
        #expect(provider.calls == 2 && cache.statistics.decodes == 2)
    }

    @Test func thePolicyCanLimitAFetchToTheRequestedFormats() async throws {
        let provider = TestProvider(["a": .photo("Landscape_2")])
        let fixture = try Fixture(provider: provider) { $0.shouldProcessAllFormatsInFamily = { family, _ in family != "photos" } }
        let entity = CacheEntity(key: "a", sourceName: "1")
        _ = try await fixture.cache.image(for: entity, format: "small")
        #expect(try fixture.cache.cachedImage(for: entity, format: "grey") == nil)
        _ = try await fixture.cache.image(for: entity, format: "grey")
        #expect(provider.calls == 2 && fixture.cache.statistics.stored == 2)
    }

    @Test func aCancelledWaiterStopsAtOnceAndTheOthersGetTheImage() async throws {
        let provider = TestProvider(["a": .photo("Landscape_4")], gated: true)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let entity = CacheEntity(key: "a", sourceName: "1")
        let leaving = Task { try await cache.image(for: entity, format: "small") }
        let staying = Task { try await cache.image(for: entity, format: "grey") }
        #expect(await eventually { cache.statistics.joined == 1 })
        leaving.cancel()
        // The gate is still shut: the cancelled waiter returns without the fetch ending.
        let error = await cacheError(leaving)
        #expect(error?.code == .cancelled && error?.key == "a" && error?.message.contains("'small'") == true)
        provider.openGate()
        let image = try await staying.value
        #expect(image.format == "grey" && image.copyPixels() != nil)
        #expect(provider.calls == 1 && provider.cancellations == 0, "the provider was not cancelled")
    }

    @Test func cancellingTheLastWaiterCancelsTheProvidersWork() async throws {
        let provider = TestProvider(["a": .photo("Landscape_5")], gated: true)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let entity = CacheEntity(key: "a", sourceName: "1")
        let first = Task { try await cache.image(for: entity, format: "small") }
        let second = Task { try await cache.image(for: entity, format: "small") }
        #expect(await eventually { provider.calls == 1 && cache.statistics.joined == 1 })
        first.cancel()
        #expect(await cacheError(first)?.code == .cancelled)
        try await Task.sleep(for: .milliseconds(20))
        #expect(provider.cancellations == 0, "one waiter is left")
        second.cancel()
        #expect(await cacheError(second)?.code == .cancelled)
        #expect(await eventually { provider.cancellations == 1 }, "the provider saw its task cancelled")
        #expect(cache.statistics.decodes == 0)

        // The cancelled fetch is forgotten: the next request fetches afresh.
        provider.openGate()
        _ = try await cache.image(for: entity, format: "small")
        #expect(provider.calls == 2 && cache.statistics.decodes == 1)
    }

    /// A provider that asks the cache for another format of the entity it is fetching would join
    /// its own fetch and wait for itself for ever (and so would every later request for the
    /// entity): that request fails with `invalid-request` instead, and the fetch goes on.
    @Test func aProviderAskingForItsOwnEntityGetsAnErrorNotAHang() async throws {
        final class Reentrant: SourceProvider {
            let cache = Mutex<ImageCache?>(nil)
            let inner = Mutex<ImageTableError?>(nil)
            func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
                if let cache = cache.withLock({ $0 }) {
                    do {
                        _ = try await cache.image(for: entity, format: "grey")
                    } catch {
                        inner.withLock { $0 = error }
                    }
                }
                return .photo("Landscape_0")
            }
        }
        let provider = Reentrant()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try ImageCache(configuration: .test(directory: directory, formats: Fixture.formats), provider: provider)
        provider.cache.withLock { $0 = cache }
        defer {
            provider.cache.withLock { $0 = nil }
            cache.close()
        }
        let entity = CacheEntity(key: "a", sourceName: "1")
        let outer = Task { try await cache.image(for: entity, format: "small") }
        let finished = await eventually { provider.inner.withLock { $0 != nil } }
        if !finished { outer.cancel() }
        #expect(finished, "the provider's own request never returned")
        #expect(provider.inner.withLock { $0?.code } == .invalidRequest)
        let image = try await outer.value
        #expect(image.copyPixels() != nil)
        #expect(try cache.cachedImage(for: entity, format: "grey") != nil, "the fetch drew the whole family")
    }

    /// A provider that asks the cache for other entities lends its fetch place while it waits:
    /// with one place, the fetch it waited for could never start (and with the default six,
    /// six such providers stopped every fetch of the cache).
    @Test(arguments: [1, 2])
    func aProviderAskingForAnotherEntityDoesNotStopTheFetches(places: Int) async throws {
        final class Nesting: SourceProvider {
            let cache = Mutex<ImageCache?>(nil)
            let inner = Mutex<[String]>([])
            func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
                // Every outer entity asks for one inner entity: more waiting providers than places.
                guard entity.key.hasPrefix("outer"), let cache = cache.withLock({ $0 }) else { return .photo("Landscape_0") }
                // Two waits that overlap (a composite drawn from two entities): the place is
                // lent while either waits, and taken again only when both are done.
                async let first = cache.image(for: CacheEntity(key: "inner", sourceName: "1"), format: "small")
                try await Task.sleep(for: .milliseconds(entity.key == "outer0" ? 0 : 20))
                async let second = cache.image(for: CacheEntity(key: "inner-\(entity.key)", sourceName: "1"), format: "small")
                let keys = try await [first.key, second.key]
                inner.withLock { $0.append(keys.joined(separator: "+")) }
                return .photo("Landscape_0")
            }
        }
        let provider = Nesting()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ImageCache.Configuration.test(directory: directory, formats: Fixture.formats)
        configuration.maximumConcurrentFetches = places
        let cache = try ImageCache(configuration: configuration, provider: provider)
        provider.cache.withLock { $0 = cache }
        defer {
            provider.cache.withLock { $0 = nil }
            cache.close()
        }
        let outers = (0..<3).map { i in Task { try await cache.image(for: CacheEntity(key: "outer\(i)", sourceName: "1"), format: "icon") } }
        let finished = await eventually { provider.inner.withLock { $0.count } == 3 }
        if !finished { outers.forEach { $0.cancel() } }
        #expect(finished, "the providers' own requests never returned")
        for (i, task) in outers.enumerated() { #expect(try await task.value.key == "outer\(i)") }
        #expect(Set(provider.inner.withLock { $0 }) == Set((0..<3).map { "inner+inner-outer\($0)" }))
        #expect(cache.statistics.fetches == 7)
        // Lent places were taken back and released once: a later fetch still finds one.
        let later = try await cache.image(for: CacheEntity(key: "later", sourceName: "1"), format: "icon")
        #expect(later.key == "later")
    }

    /// No more than `maximumConcurrentFetches` provider calls run at once; the other fetches wait
    /// their turn, and one cancelled while it waits never calls the provider.
    @Test func atMostTheConfiguredNumberOfFetchesCallTheProviderAtOnce() async throws {
        let names = (0..<8).map { "p\($0)" }
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: names.map { ($0, .photo("Landscape_\(names.firstIndex(of: $0)!)")) }),
                                    gated: true)
        let fixture = try Fixture(provider: provider) { $0.maximumConcurrentFetches = 3 }
        let cache = fixture.cache
        let tasks = Dictionary(uniqueKeysWithValues: names.map { name in
            (name, Task { try await cache.image(for: CacheEntity(key: name, sourceName: "1"), format: "small") })
        })
        #expect(await eventually { provider.calls == 3 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(provider.calls == 3, "the others wait for a place")
        let waiting = try #require(names.first { !provider.keys.contains($0) })
        tasks[waiting]!.cancel()
        #expect(await (try? tasks[waiting]!.value) == nil)
        provider.openGate()
        for (name, task) in tasks where name != waiting {
            #expect(try await task.value.key == name)
        }
        #expect(provider.calls == 7 && !provider.keys.contains(waiting), "\(provider.keys)")
    }

    /// A fetch whose render has begun is not abandoned when its last waiter leaves: a request
    /// made meanwhile (scrolled away and back) joins it, with no second download or decode. It
    /// used to start a second fetch, which then waited for the first one's write of the same key
    /// and could fail with `busy`.
    @Test func aRequestDuringAnAbandonedRenderJoinsIt() async throws {
        let provider = TestProvider(["a": .photo("Landscape_0")])
        let renderer = GatedRenderer()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try ImageCache(configuration: .test(directory: directory, formats: Fixture.formats), provider: provider, renderer: renderer)
        defer { cache.close() }
        let entity = CacheEntity(key: "a", sourceName: "1")
        let first = Task { try await cache.image(for: entity, format: "small") }
        #expect(await eventually { renderer.started.load(ordering: .relaxed) == 1 })
        first.cancel()
        #expect(await (try? first.value) == nil, "the cancelled request returns at once")
        let second = Task { try await cache.image(for: entity, format: "small") }
        #expect(await eventually { cache.statistics.joined == 1 }, "the second request joins the fetch that is rendering")
        renderer.gate.signal()
        let image = try await second.value
        #expect(image.copyPixels() != nil)
        #expect(provider.calls == 1 && renderer.started.load(ordering: .relaxed) == 1 && cache.statistics.fetches == 1)
    }

    /// A render waiting for a render thread has not begun: when its waiters leave (prefetches
    /// of cells scrolled past) it is dropped, not decoded, and the renders queued after it do
    /// not wait for it. Queued renders counted as begun, so every one was decoded.
    @Test func aQueuedRenderWhoseWaitersLeftIsNotDecoded() async throws {
        let names = (0..<6).map { "p\($0)" }
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: (names + ["later"]).map { ($0, .photo("Landscape_0")) }))
        let renderer = GatedRenderer()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ImageCache.Configuration.test(directory: directory, formats: Fixture.formats)
        configuration.renderThreads = 1
        let cache = try ImageCache(configuration: configuration, provider: provider, renderer: renderer)
        defer { cache.close() }
        let first = Task { try await cache.image(for: CacheEntity(key: names[0], sourceName: "1"), format: "small") }
        #expect(await eventually { renderer.started.load(ordering: .relaxed) == 1 })
        let queued = names.dropFirst().map { name in Task { try await cache.image(for: CacheEntity(key: name, sourceName: "1"), format: "small") } }
        #expect(await eventually { provider.calls == names.count })
        // Fetched, and queued behind the held render.
        try await Task.sleep(for: .milliseconds(100))
        queued.forEach { $0.cancel() }
        for task in queued { #expect(await cacheError(task)?.code == .cancelled) }
        renderer.gate.signal()
        #expect(try await first.value.copyPixels() != nil)
        // The queue has drained once a request made after it is answered.
        let later = try await cache.image(for: CacheEntity(key: "later", sourceName: "1"), format: "grey")
        #expect(later.key == "later")
        #expect(renderer.started.load(ordering: .relaxed) == 2 && cache.statistics.decodes == 2,
                "decoded: \(renderer.started.load(ordering: .relaxed))")
    }

    /// Sources fetched and waiting for a render thread are at most `maximumConcurrentFetches`:
    /// a fetch keeps its place until its render begins. Released when the provider returned, a
    /// fast provider behind slow renders let every source of a prefetch wait in memory (here
    /// all ten, with the render held).
    @Test func fetchedSourcesWaitingForARenderAreBounded() async throws {
        let names = (0..<10).map { "p\($0)" }
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: names.map { ($0, .photo("Landscape_0")) }))
        let renderer = GatedRenderer()
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ImageCache.Configuration.test(directory: directory, formats: Fixture.formats)
        configuration.renderThreads = 1
        configuration.maximumConcurrentFetches = 2
        let cache = try ImageCache(configuration: configuration, provider: provider, renderer: renderer)
        defer { cache.close() }
        let tasks = names.map { name in Task { try await cache.image(for: CacheEntity(key: name, sourceName: "1"), format: "small") } }
        #expect(await eventually { renderer.started.load(ordering: .relaxed) == 1 && provider.calls == 3 })
        try await Task.sleep(for: .milliseconds(100))
        // One rendering, two fetched and queued, holding both places; the others wait to fetch.
        #expect(provider.calls == 3 && cache.fetchLimiter.runningCount == 2, "\(provider.calls) provider calls")
        renderer.gate.signal()
        for (name, task) in zip(names, tasks) { #expect(try await task.value.key == name) }
        #expect(provider.calls == 10 && cache.fetchLimiter.runningCount == 0)
    }

    @Test func aProviderErrorReachesEveryWaiterAndALaterRequestRetries() async throws {
        let provider = TestProvider(["a": .photo("Portrait_4")], gated: true)
        provider.failNext(1)
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let entity = CacheEntity(key: "a", sourceName: "1")
        let tasks = (0..<10).map { _ in Task { try await cache.image(for: entity, format: "small") } }
        #expect(await eventually { cache.statistics.joined == 9 })
        provider.openGate()
        for task in tasks {
            let error = await cacheError(task)
            #expect(error?.code == .sourceUnavailable && error?.cause == "the test provider was told to fail")
        }
        #expect(provider.calls == 1)
        let image = try await cache.image(for: entity, format: "small")
        #expect(provider.calls == 2 && image.copyPixels() != nil)
    }

    @Test func decodeFailuresAreTypedAndDoNotPoisonTheSource() async throws {
        let good = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1")))
        let provider = TestProvider(["junk": .data(Data("not an image".utf8)), "short": .data(good.prefix(good.count / 3)),
                                     "missing": .file("/nonexistent/x.jpg")])
        let fixture = try Fixture(provider: provider)
        let cache = fixture.cache
        let expected: [String: ImageTableError.Code] = ["junk": .unsupportedFormat, "short": .truncated, "missing": .unreadable]
        for (key, code) in expected {
            let error = await #expect(throws: ImageTableError.self) {
                try await cache.image(for: CacheEntity(key: key, sourceName: "1"), format: "small")
            }
            #expect(error?.code == code && error?.key == key, "\(key)")
        }
        #expect(try cache.cachedImage(for: CacheEntity(key: "junk", sourceName: "1"), format: "small") == nil)
        provider.set("junk", .data(good))
        let image = try await cache.image(for: CacheEntity(key: "junk", sourceName: "1"), format: "small")
        #expect(image.copyPixels() != nil && provider.calls == 4)
    }

    /// With one place, prefetches queue; a request made after them waited behind every one
    /// (15.7 s behind 2,000 prefetches of 50 ms): it goes first, and so does a prefetch that a
    /// request joins.
    @Test func requestsGoBeforeQueuedPrefetches() async throws {
        let keys = ["p1", "p2", "p3", "p4", "now"]
        let provider = TestProvider(Dictionary(uniqueKeysWithValues: keys.map { ($0, .file(Corpus.png("basn0g08"))) }), gated: true)
        let fixture = try Fixture(provider: provider) { $0.maximumConcurrentFetches = 1 }
        let cache = fixture.cache
        let prefetches = keys.prefix(4).map { cache.prefetch(CacheEntity(key: $0, sourceName: "1"), format: "small") }
        #expect(await eventually { provider.calls == 1 && cache.fetchLimiter.waitingCount == 3 })
        let request = Task(priority: .high) { try await cache.image(for: CacheEntity(key: "now", sourceName: "1"), format: "small") }
        #expect(await eventually { cache.fetchLimiter.waitingCount == 4 })
        let first = try #require(provider.keys.first)
        let queued = try #require(keys.prefix(4).last { $0 != first })
        let joining = Task(priority: .high) { try await cache.image(for: CacheEntity(key: queued, sourceName: "1"), format: "grey") }
        #expect(await eventually { cache.statistics.joined == 1 })
        provider.openGate()
        _ = try await (request.value, joining.value)
        for prefetch in prefetches { try await prefetch.value }
        let order = provider.keys
        #expect(order.count == 5 && Set(order[1...2]) == ["now", queued], "\(order)")
    }

    /// A request that joins a prefetch raised its place in the fetch queue, but the fetch itself
    /// went on at the prefetch's priority (`utility`), behind the pool's other work: its task is
    /// escalated to the request's, as the provider sees.
    @Test(arguments: [nil, 3600.0])
    func aRequestJoiningAPrefetchEscalatesItsFetch(fetchTimeout: Double?) async throws {
        final class Recording: SourceProvider {
            let gate = Mutex(false), seen = Mutex<[TaskPriority]>([])
            func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
                seen.withLock { $0.append(Task.currentPriority) }
                while !gate.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 2_000_000) }
                seen.withLock { $0.append(Task.currentPriority) }
                return .file(Corpus.png("basn2c08"))
            }
        }
        let provider = Recording()
        defer { provider.gate.withLock { $0 = true } }
        // With a limit, the call runs in a task of its own; one long enough that a busy suite, which
        // starves the cooperative pool for tens of seconds, never meets it.
        let fixture = try Fixture(source: provider) { $0.fetchTimeout = fetchTimeout }
        let cache = fixture.cache
        let entity = CacheEntity(key: "p", sourceName: "1")
        let prefetch = cache.prefetch(entity, format: "small")
        #expect(await eventually { provider.seen.withLock { $0.count } == 1 })
        let request = Task(priority: .high) { try await cache.image(for: entity, format: "small") }
        #expect(await eventually { cache.statistics.joined == 1 })
        provider.gate.withLock { $0 = true }
        _ = try await request.value
        let seen = provider.seen.withLock { $0 }
        #expect(seen.count == 2 && seen[0] == .utility && seen[1] >= .high, "\(seen)")
        try await prefetch.value
    }

    /// A provider that ignores cancellation and never answers kept its fetch place for ever: as
    /// many such calls as there are places stopped every miss. Past `fetchTimeout`, its waiters
    /// get `timed-out` and its place is free for the next fetch while the call runs on.
    @Test func aProviderThatNeverAnswersTimesOutAndFreesItsPlace() async throws {
        final class Hanging: SourceProvider {
            let released = Mutex(false), calls = Mutex(0)
            func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
                calls.withLock { $0 += 1 }
                if entity.key == "hang" {
                    // Deaf to cancellation, as a blocking call in a provider is.
                    while !released.withLock({ $0 }) { try? await Task.sleep(nanoseconds: 5_000_000) }
                }
                return .file(Corpus.png("basn2c08"))
            }
        }
        let provider = Hanging()
        defer { provider.released.withLock { $0 = true } }
        let fixture = try Fixture(source: provider) {
            $0.maximumConcurrentFetches = 1
            $0.fetchTimeout = 0.2
        }
        let cache = fixture.cache
        let hung = Task { try await cache.image(for: CacheEntity(key: "hang", sourceName: "1"), format: "small") }
        // Without the limit it would wait for ever: a cancelled waiter leaves at once, and fails.
        let watchdog = Task {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            hung.cancel()
        }
        defer { watchdog.cancel() }
        do {
            _ = try await hung.value
            Issue.record("a provider that never answered gave an image")
        } catch let error as ImageTableError {
            #expect(error.code == .timedOut && error.key == "hang", "\(error)")
            #expect(error.message == "the source provider did not answer within 0.2 s (Configuration.fetchTimeout); its call was cancelled")
        }
        // Its place is free for the next fetch while the call still runs.
        #expect(await eventually { cache.fetchLimiter.runningCount == 0 })
        #expect(provider.calls.withLock { $0 } == 1 && provider.released.withLock { !$0 })
    }
}

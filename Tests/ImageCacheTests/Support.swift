import Foundation
import ImageCache
import ImageCacheVips
import ImageTableCore
import Synchronization
import TestSupport
import Testing

/// A provider that counts its calls, can hold every call at a gate until the test opens it,
/// records whether a held call saw its task cancelled, and fails the next calls on request.
final class TestProvider: SourceProvider {
    struct State {
        var calls = 0
        var cancellations = 0
        var failuresLeft = 0
        var gateOpen = true
        var held: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// Calls cancelled before they reached the gate.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        /// The keys of the calls, in the order they came.
        var keys: [String] = []
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String { "the test provider was told to fail" }
    }

    let state = Mutex(State())
    /// Key → what to return.
    let sources: Mutex<[String: SourceImage]>

    init(_ sources: [String: SourceImage] = [:], gated: Bool = false) {
        self.sources = Mutex(sources)
        state.withLock { $0.gateOpen = !gated }
    }

    var calls: Int { state.withLock { $0.calls } }
    var cancellations: Int { state.withLock { $0.cancellations } }
    var keys: [String] { state.withLock { $0.keys } }

    func set(_ key: String, _ source: SourceImage) { sources.withLock { $0[key] = source } }

    func failNext(_ count: Int) { state.withLock { $0.failuresLeft = count } }

    func openGate() {
        let held = state.withLock { s in
            s.gateOpen = true
            defer { s.held = [:] }
            return Array(s.held.values)
        }
        for continuation in held { continuation.resume() }
    }

    func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage {
        let id = state.withLock { s in
            s.calls += 1
            s.keys.append(entity.key)
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let proceed = state.withLock { s -> Bool? in
                    if s.cancelled.contains(id) { return nil }
                    if s.gateOpen { return true }
                    s.held[id] = continuation
                    return false
                }
                switch proceed {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let held = state.withLock { s in
                s.cancellations += 1
                s.cancelled.insert(id)
                return s.held.removeValue(forKey: id)
            }
            held?.resume(throwing: CancellationError())
        }
        let fail = state.withLock { s in
            defer { s.failuresLeft = max(0, s.failuresLeft - 1) }
            return s.failuresLeft > 0
        }
        if fail { throw Failure() }
        guard let source = sources.withLock({ $0[entity.key] }) else { throw Failure() }
        return source
    }
}

/// A cache over a fresh directory, removed at deinit.
final class Fixture: Sendable {
    let directory: String
    let cache: ImageCache
    /// The provider the cache calls.
    let source: any SourceProvider
    /// ``source``, for the fixtures made with a ``TestProvider`` (every one but those of tests
    /// with a provider of their own).
    var provider: TestProvider { source as! TestProvider }

    /// Two formats of family `photos` (32×32 BGRA cover, 24×16 grey inside) and one of family
    /// `icons` (16×16 BGR).
    static let formats = [
        TableFormat(name: "small", family: "photos", width: 32, height: 32, style: .bgra32, capacity: 40),
        TableFormat(name: "grey", family: "photos", width: 24, height: 16, style: .grayscale8, capacity: 40, rendering: RenderingOptions(fit: .inside)),
        TableFormat(name: "icon", family: "icons", width: 16, height: 16, style: .bgr32, capacity: 10),
    ]

    convenience init(provider: TestProvider = TestProvider(), formats: [TableFormat] = Fixture.formats, directory: String? = nil,
                     configure: (inout ImageCache.Configuration) -> Void = { _ in }) throws {
        try self.init(source: provider, formats: formats, directory: directory, configure: configure)
    }

    /// A cache that calls `source`, a provider of the test's own.
    init(source: any SourceProvider, formats: [TableFormat] = Fixture.formats, directory: String? = nil,
         configure: (inout ImageCache.Configuration) -> Void = { _ in }) throws {
        self.directory = directory ?? NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        var configuration = ImageCache.Configuration.test(directory: self.directory, formats: formats)
        configure(&configuration)
        cache = try ImageCache(configuration: configuration, provider: source)
        self.source = source
    }

    deinit {
        cache.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The pipeline's renderer, holding the first render at a gate until the test opens it (the
/// renders after it pass): a render under way, on the render thread, for as long as a test needs.
final class GatedRenderer: Renderer {
    let inner = VipsRenderer()
    /// Renders begun so far.
    let started = Atomic<Int>(0)
    let gate = DispatchSemaphore(value: 0)
    func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect] {
        if started.add(1, ordering: .relaxed).newValue == 1 { gate.wait() }
        return try inner.render(source, into: targets)
    }
}

/// Polls `condition` every millisecond until it holds or `seconds` pass. The limit is longer
/// than the whole test run (about 90 s on 2 cores): Swift Testing runs synchronous tests on
/// the cooperative pool's threads, which other suites' blocking tests (bakes, kills, waits for
/// processes) can hold for nearly the whole run, so a miss's chain of tasks may get no thread
/// until they end (two tests waited out 90 s so in CI once). A passing condition returns at once.
func eventually(within seconds: Double = 300, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

extension SourceImage {
    static func photo(_ name: String) -> SourceImage { .file(Corpus.photo(name)) }
}

/// The error a failed request threw, or `nil` when it succeeded.
func cacheError<T>(_ task: Task<T, any Error>) async -> ImageTableError? {
    do {
        _ = try await task.value
        return nil
    } catch {
        return error as? ImageTableError
    }
}

extension ImageCache.Configuration {
    /// A test's configuration: no `fetchTimeout`. Tests hold providers at gates for as long as
    /// they need, and in the full suite, whose synchronous tests occupy the cooperative threads
    /// for seconds at a time, a test's own task can wait tens of seconds to run: gated calls
    /// timed out there, and the states the tests waited for never came.
    static func test(directory: String, formats: [TableFormat]) -> Self {
        var configuration = Self(directory: directory, formats: formats)
        configuration.fetchTimeout = nil
        return configuration
    }
}

import Foundation
// Re-exported: the cache's API is made of the core's types (TableFormat, SourceImage, ImageView,
// ImageTableError), and an application that imports ImageCache alone could not name them.
@_exported import ImageTableCore
import Synchronization

/// Images of entities in fixed formats, from memory-mapped tables: FastImageCache's
/// `FICImageCache` for Swift concurrency.
///
/// ```swift
/// // With ImageCacheVips (the bake's libvips pipeline and manifest configuration):
/// let manifest = ManifestValidator(options: ValidationOptions()).validate(fileAt: "images.yaml").manifest!
/// let cache = try ImageCache(configuration: .init(manifest: manifest), provider: Downloads())
/// let entity = CacheEntity(key: "users/42/avatar", sourceName: avatarURL.absoluteString)
/// let image = try await cache.image(for: entity, format: "avatar@2x")
/// let texture = image.withPixels { view in makeTexture(view.baseAddress, view.bytesPerRow) }  // nil once evicted
/// ```
///
/// A request is answered at once from the format's table when it holds the entity made from
/// the entity's ``CacheEntity/sourceID``. Otherwise the ``SourceProvider`` is asked for the source
/// (once, however many requests wait for it, for whichever formats of the family), the
/// ``Renderer`` decodes it once and draws every format of the family that lacks a fresh entry (see
/// ``Configuration/shouldProcessAllFormatsInFamily``), the entries are published, and every
/// waiter gets its handle. Cancelling a waiting task ends its wait at once; the fetch is cancelled
/// when no waiter is left. See `docs/RUNTIME.md`.
///
/// Thread safety: every method may be called from any thread or task. Hits take no lock of the
/// cache's own (only the table's mutex, for the LRU stamp, which a write can hold for longer:
/// see `docs/RUNTIME.md`) and never suspend. `init` blocks while another process holds a
/// table's lock, up to ``Configuration/lockTimeout``. Rendering runs on dedicated
/// threads (``Configuration/renderThreads``), never on Swift's cooperative pool. The cache holds
/// each table's writer lock until ``close()`` or deinit, so a bake of the same tables waits.
public final class ImageCache: Sendable {
    /// The configuration the cache was created with.
    public let configuration: Configuration
    /// Where misses get their sources.
    public let provider: any SourceProvider
    let tables: [String: FormatTable]
    let families: [String: [FormatTable]]
    /// Per family whose smallest table has fewer slots than there are render threads, what
    /// holds its renders to that many (``FamilyGate``).
    let familyGates: [String: FamilyGate]
    /// Per family, every format its sources are drawn with: those served and
    /// ``Configuration/siblingFormats``.
    let familyFormats: [String: [TableFormat]]
    let flights = FlightRegistry()
    let pool: RenderPool
    let fetchLimiter: FetchLimiter
    /// Draws sources on a miss.
    public let renderer: any Renderer
    let counters = Counters()
    /// Set by ``close()``: misses then fail at once instead of fetching what cannot be stored.
    let closed = Atomic<Bool>(false)

    final class Counters: Sendable {
        let hits = Atomic<Int>(0)
        let misses = Atomic<Int>(0)
        let joined = Atomic<Int>(0)
        let fetches = Atomic<Int>(0)
        let stored = Atomic<Int>(0)
        let decodes = Atomic<Int>(0)
    }

    /// Opens (creating or rebuilding) the table of every configured format.
    ///
    /// - Parameters:
    ///   - configuration: formats, directory and policies.
    ///   - provider: supplies sources on a miss.
    ///   - renderer: draws them (`ImageCacheVips.VipsRenderer` for the bake's pipeline).
    /// - Throws: `ImageTableError`: `invalid-request` for no formats, duplicate identifiers or
    ///   invalid names; `io` when the directory cannot be created; the core's own code when a
    ///   table cannot be opened (`locked` by a bake past ``Configuration/lockTimeout``,
    ///   `insecure-file`, …).
    public init(configuration: Configuration, provider: any SourceProvider, renderer: any Renderer) throws(ImageTableError) {
        guard !configuration.formats.isEmpty else { throw ImageTableError(.invalidRequest, "no formats are configured") }
        do throws(ImageTableError) {
            try Directories.make(configuration.directory)
        } catch {
            throw Directories.failure(error, making: "the table directory", path: configuration.directory)
        }
        let options = ImageTableWriter.Options(lockTimeout: configuration.lockTimeout, durability: configuration.durability)
        var tables: [String: FormatTable] = [:]
        var families: [String: [FormatTable]] = [:]
        // Each family as it is drawn: the formats served and their unserved siblings.
        let served = Set(configuration.formats.map(\.family))
        let drawn = Dictionary(grouping: configuration.formats + configuration.siblingFormats.filter { served.contains($0.family) }, by: \.family)
        let tags = drawn.mapValues { renderer.drawsWithFamily ? FamilyTag.of($0) : FamilyTag.unknown }
        for format in configuration.formats {
            guard tables[format.id] == nil else {
                throw ImageTableError(.invalidRequest, "two formats are named '\(format.id)'")
            }
            let table = try FormatTable(format, directory: configuration.directory, options: options, familyTag: tags[format.family]!)
            tables[format.id] = table
            families[format.family, default: []].append(table)
        }
        self.configuration = configuration
        self.provider = provider
        self.tables = tables
        self.families = families
        familyGates = families.compactMapValues { tables in
            FamilyGate(slots: tables.map(\.format.capacity).min() ?? 0, renderThreads: configuration.renderThreads)
        }
        familyFormats = drawn
        pool = RenderPool(threads: configuration.renderThreads)
        fetchLimiter = FetchLimiter(limit: configuration.maximumConcurrentFetches)
        self.renderer = renderer
    }

    // Handles hold the tables' writers, so without this a cache dropped while a handle lived
    // kept every writer lock, and a new cache over the same directory failed with `locked`.
    deinit { close() }

    /// Releases every table's writer lock. Afterwards hits miss, handles return `nil`, and
    /// stores fail with `not-writable`. Also done when the cache is deallocated.
    ///
    /// Requests waiting for a fetch fail at once with `not-writable`, and the fetches are
    /// cancelled: a provider call under way sees its task cancelled, and none waiting for a
    /// place starts (they downloaded whole, then failed, one after another). A render already
    /// running on a render thread ends with its store failing.
    public func close() {
        closed.store(true, ordering: .releasing)
        flights.endAll(.failure(ImageTableError(.notWritable, "the cache is closed")))
        for table in tables.values { table.table.close() }
    }

    /// The configured formats, in configuration order.
    public var formats: [TableFormat] { configuration.formats }

    /// What opening each format's table did that the app may want to know, by format
    /// identifier; formats whose table opened as it was are absent.
    ///
    /// Chiefly a `reset` notice: the table on disk was made for other parameters (a format
    /// configured in code that differs from the manifest the bake used, by as little as one
    /// rendering option) or was damaged, and was rebuilt empty, so every entity will be fetched
    /// again. Also interrupted writes discarded and damaged records dropped after a crash.
    public var notices: [String: [TableNotice]] {
        tables.compactMapValues { $0.table.notices.isEmpty ? nil : $0.table.notices }
    }

    /// Counts of hits, misses, fetches, decodes and stores so far.
    public var statistics: Statistics {
        var s = Statistics()
        s.hits = counters.hits.load(ordering: .relaxed)
        s.misses = counters.misses.load(ordering: .relaxed)
        s.joined = counters.joined.load(ordering: .relaxed)
        s.fetches = counters.fetches.load(ordering: .relaxed)
        s.decodes = counters.decodes.load(ordering: .relaxed)
        s.stored = counters.stored.load(ordering: .relaxed)
        return s
    }

    /// The image of `entity` in `format` if the table holds it fresh; never fetches. FastImageCache's
    /// synchronous path of `retrieveImageForEntity`. Counts a use of the entry; allocates nothing.
    ///
    /// - Parameters:
    ///   - entity: the entity; an entry from another source ID is a miss.
    ///   - format: a format identifier (`TableFormat.id`).
    /// - Returns: the handle, or `nil` on a miss.
    /// - Throws: `ImageTableError` `unknown-format`.
    public func cachedImage(for entity: CacheEntity, format: String) throws(ImageTableError) -> CachedImage? {
        let table = try formatTable(format)
        guard let image = table.hit(entity) else {
            counters.misses.add(1, ordering: .relaxed)
            return nil
        }
        counters.hits.add(1, ordering: .relaxed)
        return image
    }

    /// Runs `body` on the pixels of `entity` in `format` if the table holds them fresh; never
    /// fetches. The cheapest hit: one checked read, zero-copy, no handle (a handle's
    /// ``CachedImage/withPixels(_:)`` looks the entry up a second time). Counts a use of the
    /// entry; allocates nothing.
    ///
    /// `body` may run more than once when a writer replaces the entry meanwhile (see
    /// ``CachedImage/withPixels(_:)``), so it should only read, and must not keep the view.
    ///
    /// - Parameters:
    ///   - entity: the entity; an entry from another source ID is a miss.
    ///   - format: a format identifier.
    ///   - body: reads the view.
    /// - Returns: `body`'s result, or `nil` on a miss.
    /// - Throws: `ImageTableError` `unknown-format`.
    public func withCachedPixels<R>(for entity: CacheEntity, format: String, _ body: (ImageView) -> R) throws(ImageTableError) -> R? {
        let table = try formatTable(format)
        guard let result = try? table.table.withImage(entityUUID: entity.entityUUID, sourceUUID: entity.sourceID, body) else {
            counters.misses.add(1, ordering: .relaxed)
            return nil
        }
        counters.hits.add(1, ordering: .relaxed)
        return result
    }

    /// The image of `entity` in `format`: from the table at once on a hit, otherwise fetched,
    /// drawn for the family, stored and returned.
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`): a hit never hops threads. A
    /// miss suspends until the shared fetch ends; cancelling the calling task ends the wait at
    /// once with `cancelled`, and cancels the fetch if no other request waits for it.
    ///
    /// - Parameters:
    ///   - entity: the entity; a stored entry from another source ID is stale and refetched.
    ///   - format: a format identifier (`TableFormat.id`).
    /// - Returns: the handle.
    /// - Throws: `ImageTableError`: `unknown-format`; `invalid-request` for a key over 160 UTF-8
    ///   bytes; `source-unavailable` when the provider threw (its own code when it threw an
    ///   `ImageTableError`); `timed-out` when it did not answer within the fetch timeout; the
    ///   renderer's source code (`truncated`, `unsupported-format`…); a table's code
    ///   (`no-space`…); `not-writable` after ``close()``; `cancelled`; `not-stored` when the
    ///   table is so small that other writes evicted the entry three times before it could be
    ///   returned; `busy` when another write held the slot it needed for 5 s.
    public nonisolated(nonsending) func image(for entity: CacheEntity, format: String) async throws(ImageTableError) -> CachedImage {
        let table = try formatTable(format)
        if let image = table.hit(entity) {
            counters.hits.add(1, ordering: .relaxed)
            return image
        }
        counters.misses.add(1, ordering: .relaxed)
        return try await load(entity, table)
    }

    /// Whether the table of `format` holds `entity` made from its source; does not count a use.
    ///
    /// - Parameters:
    ///   - entity: the entity.
    ///   - format: a format identifier.
    /// - Throws: `ImageTableError` `unknown-format`.
    public func containsImage(for entity: CacheEntity, format: String) throws(ImageTableError) -> Bool {
        try formatTable(format).isFresh(entity)
    }

    @inline(__always)
    func formatTable(_ id: String) throws(ImageTableError) -> FormatTable {
        guard let table = tables[id] else {
            throw ImageTableError(.unknownFormat, "no format '\(id)' is configured; the formats are \(tables.keys.sorted())")
        }
        return table
    }
}

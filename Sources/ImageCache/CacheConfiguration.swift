import Foundation
import ImageTableCore

extension ImageCache {
    /// Which formats the cache serves, where their tables live, and how it fills them.
    public struct Configuration: Sendable {
        /// The directory holding the table files (`<format id>.imagetable`); created if missing.
        public var directory: String
        /// The formats served; identifiers (`TableFormat.id`) must be unique.
        public var formats: [TableFormat]
        /// Formats of the served families that the cache does not serve, but that shape how their
        /// sources are drawn: a family's source is decoded once, at the size its largest format
        /// needs, so each format's pixels depend on its siblings. `Configuration(manifest:scales:)`
        /// puts the manifest's other scales here, so that an entry the cache draws is the bake's,
        /// and no bake draws it again. Formats of other families are ignored. Empty by default.
        public var siblingFormats: [TableFormat] = []
        /// How hard a store works to survive power loss. `processCrashOnly` by default: a cache's
        /// content can be fetched again, and flushing costs milliseconds per entry.
        public var durability: ImageTableWriter.Durability
        /// Seconds to wait for another process writing a table (a bake) when opening it.
        public var lockTimeout: Double
        /// Threads that run the renderer. Rendering blocks its thread for tens of milliseconds
        /// per source, so it never runs on Swift's cooperative pool; 2 by default (1 on a machine
        /// of one core). A family whose smallest `maximumCount` is lower renders at most that
        /// many sources at once (so that two renders never wait for each other's slot).
        public var renderThreads: Int
        /// Fetches at once, 6 by default (Nuke's): a fetch holds a place from its provider call
        /// until its render begins, so this bounds both the downloads under way and the sources
        /// held in memory waiting for a render thread (slow renders hold downloads back). The
        /// fetches of other misses wait their turn, so a prefetch of a long list does not start
        /// every download at once.
        public var maximumConcurrentFetches: Int
        /// Seconds a source provider call may take in all, from its start, 60 by default;
        /// `nil` (or a negative value) for no limit. Not an idle timeout like URLSession's
        /// `timeoutIntervalForRequest`, which restarts whenever data arrives: a large download
        /// over a slow link needs a longer limit, and a provider that waits for another entity
        /// of the cache spends this call's time waiting. Past it, the fetch's waiters get
        /// `timed-out`, the call is cancelled, and its place among ``maximumConcurrentFetches``
        /// goes to the next fetch, even if the provider ignores the cancellation and runs on
        /// (without a limit, as many such calls as there are places stopped every miss of the
        /// cache).
        public var fetchTimeout: Double?
        /// Whether a miss renders every format of the entity's family that lacks a fresh entry
        /// (`true`, the default: one decode fills them all), or only the formats requested while
        /// the fetch was under way. FastImageCache's `shouldProcessAllFormatsInFamily`. Called
        /// with the family's name and the entity on a render thread, as the render begins (for
        /// ``ImageCache/setImage(_:for:format:)``, on the caller's task).
        public var shouldProcessAllFormatsInFamily: @Sendable (_ family: String, _ entity: CacheEntity) -> Bool

        /// A configuration of formats built in code.
        ///
        /// - Parameters:
        ///   - directory: where the tables live.
        ///   - formats: the formats to serve.
        public init(directory: String, formats: [TableFormat]) {
            self.directory = directory
            self.formats = formats
            durability = .processCrashOnly
            lockTimeout = 10
            renderThreads = max(1, min(2, ProcessInfo.processInfo.activeProcessorCount))
            maximumConcurrentFetches = 6
            fetchTimeout = 60
            shouldProcessAllFormatsInFamily = { _, _ in true }
        }
    }

    /// What the cache has done since it was created.
    public struct Statistics: Sendable, Equatable {
        /// Requests answered from a table.
        public var hits = 0
        /// Requests that found no fresh entry: those of ``ImageCache/image(for:format:)`` (each
        /// then waits for a fetch, joining one under way when there is one), and the lookups of
        /// ``ImageCache/cachedImage(for:format:)`` and ``ImageCache/withCachedPixels(for:format:_:)``
        /// that returned `nil`.
        public var misses = 0
        /// Requests that joined a fetch already under way for the same source.
        public var joined = 0
        /// Calls of the ``SourceProvider``.
        public var fetches = 0
        /// Sources the renderer drew (each render draws every member of the family at once).
        public var decodes = 0
        /// Entries written into tables.
        public var stored = 0
    }
}

import Foundation
import ImageTableCore
import Synchronization

extension ImageCache {
    /// Stores a source the caller already has (a photo just taken, an upload's bytes) for
    /// `entity`, drawing it into `format` and, when the policy says so, every other format of
    /// its family, replacing what they held. FastImageCache's `setImage:forEntity:withFormatName:`.
    ///
    /// Does not consult the provider and does not join fetches under way. Cancelled before a
    /// render thread takes it, nothing is drawn; once rendering starts it runs to the end even if
    /// the calling task is cancelled.
    ///
    /// - Parameters:
    ///   - source: the encoded image.
    ///   - entity: the entity; its source ID is recorded with the entries.
    ///   - format: a format identifier; its family decides the other formats drawn.
    /// - Returns: the handle for `format`.
    /// - Throws: `ImageTableError`: `unknown-format`, `invalid-request` (key too long), the
    ///   renderer's source code (`truncated`, `unsupported-format`…), a table's code (`no-space`…),
    ///   `not-writable` after ``close()``, `cancelled` (only before rendering started).
    public func setImage(_ source: SourceImage, for entity: CacheEntity, format: String) async throws(ImageTableError) -> CachedImage {
        let table = try formatTable(format)
        guard entity.key.utf8.count <= TableLimits.maxKeyBytes else {
            throw ImageTableError(.invalidRequest, "the key is \(entity.key.utf8.count) UTF-8 bytes; tables allow \(TableLimits.maxKeyBytes)",
                                  key: entity.key)
        }
        guard !Task.isCancelled else { throw .cancelled(key: entity.key, format: format) }
        guard !closed.load(ordering: .acquiring) else {
            throw ImageTableError(.notWritable, "the cache is closed", key: entity.key)
        }
        let family = table.format.family
        let targets = configuration.shouldProcessAllFormatsInFamily(family, entity) ? families[family] ?? [table] : [table]
        // Cancelled while its render waits for a thread: nothing is drawn (it was drawn and stored).
        let cancelled = CancellationFlag()
        let outcome = await withTaskCancellationHandler {
            await store(source, entity: entity) { cancelled.isSet ? nil : targets }
        } onCancel: {
            cancelled.set()
        }
        switch outcome ?? .failure(.cancelled(key: entity.key, format: format)) {
        case .success(let images):
            if let image = images[table.id] { return image }
            throw ImageTableError(.notStored, "the entry was not stored", key: entity.key)
        case .failure(let error):
            throw error
        }
    }

    /// Fetches and stores `entity`'s image in `format` (and its family) without anyone waiting:
    /// for images about to be shown. Nothing is fetched when the entry is already fresh.
    ///
    /// The prefetch is a waiter like any other, run by a task of its own: it shares a fetch under
    /// way, and a request made meanwhile shares the prefetch's. Cancelling the returned task
    /// withdraws the prefetch; the fetch stops if no request waits for it.
    ///
    /// - Parameters:
    ///   - entity: the entity.
    ///   - format: a format identifier.
    /// - Returns: the prefetch's task; its value throws `ImageTableError` (for example
    ///   `unknown-format`, `source-unavailable`, `cancelled`). Ignoring it is fine.
    @discardableResult
    public func prefetch(_ entity: CacheEntity, format: String) -> Task<Void, any Error> {
        Task.detached(priority: .utility) { [self] in
            _ = try await image(for: entity, format: format)
        }
    }

    /// Removes `key`'s entries from one format's table, or from every table.
    /// FastImageCache's `deleteImageForEntity:withFormatName:`.
    ///
    /// Handles to the removed entries return `nil` from then on. A fetch under way for the key
    /// still stores its result when it ends.
    ///
    /// - Parameters:
    ///   - key: the entity's key.
    ///   - format: a format identifier, or `nil` for every format.
    /// - Returns: the number of entries removed.
    /// - Throws: `ImageTableError`: `unknown-format`; `io` or `no-space` when flushing the index
    ///   failed (the entry is gone from the cache regardless); `not-writable` after ``close()``.
    @discardableResult
    public func deleteImage(forKey key: String, format: String? = nil) throws(ImageTableError) -> Int {
        let targets = try format.map { id throws(ImageTableError) in [try formatTable(id)] } ?? Array(tables.values)
        var removed = 0
        for table in targets {
            do {
                if try table.table.delete(key: key) { removed += 1 }
            } catch {
                throw .table(error, key: key, format: table.id)
            }
        }
        return removed
    }

    /// Removes every entry from every table. FastImageCache's `reset`. The files keep their
    /// size (the slots are reused); fetches under way still store their results when they end.
    ///
    /// - Returns: the number of entries removed.
    /// - Throws: `ImageTableError` `not-writable` when the cache is closed (as ``deleteImage(forKey:format:)``);
    ///   `io` or `no-space` when flushing an index failed.
    @discardableResult
    public func reset() throws(ImageTableError) -> Int {
        // A closed table lists no entries: without this, reset would report 0 and do nothing.
        guard !closed.load(ordering: .acquiring) else { throw ImageTableError(.notWritable, "the cache is closed") }
        var removed = 0
        for table in tables.values {
            // One flush of the records per table (`.flushed`), where each entry had its own.
            do {
                removed += try table.table.delete(keys: table.table.entries().map(\.key))
            } catch {
                throw .table(error, key: nil, format: table.id)
            }
        }
        return removed
    }
}

/// Set once by a task's cancellation handler, read on a render thread.
private final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

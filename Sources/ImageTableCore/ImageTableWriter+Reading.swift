import Foundation

extension ImageTableWriter {
    /// Runs `body` on the pixels of `key`'s entry, zero-copy, and counts the read as a use.
    ///
    /// The read is checked: if a writer (another thread of this process) replaces the entry while
    /// `body` runs, the result is discarded and `body` runs again on the new state, so it may run
    /// more than once and should only read; while a rewrite is still under way the read is a
    /// miss (`nil`). The first read of each slot since the open also checks the pixels against
    /// their CRC-32, once: a table written without flushes
    /// (``ImageTableWriter/Durability/processCrashOnly``) can hold, after a power cut, a record
    /// whose pixels never reached the disk, and such an entry is a miss. Does not allocate.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects; a different stored source is a miss.
    ///   - body: reads the view; it must not keep it.
    /// - Returns: `body`'s result, or `nil` on a miss.
    /// - Throws: what `body` throws, or ``ImageTableError`` `busy` after eight consecutive torn reads.
    public func withImage<R>(forKey key: String, sourceUUID: UUID? = nil, _ body: (ImageView) throws -> R) throws -> R? {
        try withImage(entityUUID: EntityKey.uuid(for: key), sourceUUID: sourceUUID, body)
    }

    /// Runs `body` on the pixels of the entry with `entityUUID`; see ``withImage(forKey:sourceUUID:_:)``.
    ///
    /// - Parameters:
    ///   - entityUUID: the entry's entity UUID (``EntityKey/uuid(for:)`` of its key).
    ///   - sourceUUID: the source the caller expects.
    ///   - body: reads the view.
    /// - Returns: `body`'s result, or `nil` on a miss.
    /// - Throws: what `body` throws, or ``ImageTableError`` `busy`.
    public func withImage<R>(entityUUID: UUID, sourceUUID: UUID? = nil, _ body: (ImageView) throws -> R) throws -> R? {
        // The lookup takes no lock, as a reader's: after close() the mapping is private zeros,
        // where every probe misses.
        guard let (result, slot) = try file.indexedRead(entityUUID, source: sourceUUID, body) else { return nil }
        recordUse(of: entityUUID, slot: slot)
        return result
    }

    /// Whether the entry with `entityUUID` is present, made from `sourceUUID` (when given), and
    /// would be read: what ``withImage(entityUUID:sourceUUID:_:)`` would find, without counting a
    /// use. Like it, the first read of a slot since the open checks its pixels against their
    /// CRC-32 (``ImageTableWriter/Durability/processCrashOnly`` can leave a record without its
    /// pixels after a power cut), where ``contains(key:sourceUUID:)`` reads the record alone.
    ///
    /// - Parameters:
    ///   - entityUUID: the entry's entity UUID.
    ///   - sourceUUID: the source the caller expects; another stored source is `false`.
    /// - Returns: whether a read would be a hit.
    public func hasImage(entityUUID: UUID, sourceUUID: UUID? = nil) -> Bool {
        (try? file.indexedRead(entityUUID, source: sourceUUID) { _ in () }) != nil
    }

    /// The zero-copy view of `key`'s entry without the seqlock check, counting the read as a use.
    ///
    /// Safe only while nothing writes the table (for example, after a bake); a concurrent writer
    /// may replace the pixels under the view. Prefer ``withImage(forKey:sourceUUID:_:)``.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects.
    /// - Returns: the view, or `nil` on a miss.
    public func unsafeImage(forKey key: String, sourceUUID: UUID? = nil) -> ImageView? {
        try? withImage(forKey: key, sourceUUID: sourceUUID) { $0 }
    }

    /// Counts a use of `key`'s entry without reading it, when it is present (and made from
    /// `sourceUUID`, when given). A re-bake touches every unchanged source this way, so entries of
    /// sources that disappeared are the first to be replaced.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects.
    /// - Returns: whether the entry was present and current.
    @discardableResult
    public func touch(key: String, sourceUUID: UUID? = nil) -> Bool {
        let entity = EntityKey.uuid(for: key)
        guard let slot = state.withLock({ $0.closed ? nil : file.indexedSlot(of: entity) }),
              let info = file.entryInfo(slot: slot), info.entityUUID == entity,
              sourceUUID == nil || info.sourceUUID == sourceUUID else { return false }
        recordUse(of: entity, slot: slot)
        return true
    }

    /// Stamps a fresh recency into the record and moves the slot to the head of the LRU list:
    /// 16 bytes written in place, nothing else.
    private func recordUse(of entity: UUID, slot: Int) {
        let stamp = file.nextClock()
        state.withLock { s in
            let record = file.record(slot)
            guard !s.closed, record.state == IndexRecord.stateCommitted, record.entityUUID == entity else { return }
            record.setRecency(stamp)
            s.directory.touch(slot, recency: stamp)
        }
    }
}

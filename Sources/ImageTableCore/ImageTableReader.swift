import Foundation
import Synchronization

/// A table opened read-only, for runtime readers and inspection tools. Takes no lock and never
/// changes the file; reads do not count as use.
///
/// Lookups go through an in-memory dictionary built by one scan of the index at open. When a
/// lookup misses and the header's `changeCount` shows that a writer has published or removed
/// entries since, the reader rescans once and retries, so it sees new entries without polling.
/// Every hit is checked with the record's seqlock, so a concurrent writer never hands it torn
/// pixels through ``withImage(forKey:sourceUUID:_:)``.
public final class ImageTableReader: @unchecked Sendable {
    struct Directory {
        var slotByEntity: [UUID: Int32] = [:]
        var changeCount: UInt64 = 0
    }

    /// The table file.
    public let path: String
    /// The validated header.
    public var header: TableHeader { file.header }
    /// Records the open skipped as damaged or interrupted.
    public let notices: [TableNotice]
    let file: TableFile
    /// The device and inode of the file this reader has open, to tell when its path names
    /// another file (``isReplaced``).
    let identity: FileIdentity?
    private let directory: Mutex<Directory>

    /// Opens `path` read-only.
    ///
    /// - Parameter path: the table file.
    /// - Throws: ``ImageTableError`` `notATable`, `corrupt`, `unsupportedVersion`, `insecureFile`, `io`.
    public init(path: String) throws(ImageTableError) {
        self.path = path
        file = try TableFile(path: path, writable: false)
        identity = FileIdentity(descriptor: file.fd)
        let scan = RecordScan(file)
        notices = scan.problems.map { TableNotice(kind: $0.kind, message: "slot \($0.slot): \($0.reason); skipped it", slot: $0.slot) }
        directory = Mutex(Self.directory(from: scan, changeCount: file.changeCount))
    }

    private static func directory(from scan: RecordScan, changeCount: UInt64) -> Directory {
        var d = Directory(changeCount: changeCount)
        d.slotByEntity.reserveCapacity(scan.committed.count)
        for c in scan.committed { d.slotByEntity[c.entity] = Int32(c.slot) }
        return d
    }

    /// The number of entries found at open or at the last rescan.
    public var count: Int { directory.withLock { $0.slotByEntity.count } }

    /// The table's layout.
    public var layout: TableLayout { file.layout }

    /// Runs `body` on `key`'s pixels, zero-copy, checked against concurrent writers; `body` may
    /// run more than once and must only read. Does not allocate on a hit.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects; a different stored source is a miss.
    ///   - body: reads the view; it must not keep it.
    /// - Returns: `body`'s result, or `nil` on a miss.
    /// - Throws: what `body` throws, or ``ImageTableError`` `busy` after eight torn reads in a row.
    public func withImage<R>(forKey key: String, sourceUUID: UUID? = nil, _ body: (ImageView) throws -> R) throws -> R? {
        try withImage(entityUUID: EntityKey.uuid(for: key), sourceUUID: sourceUUID, body)
    }

    /// Runs `body` on the pixels of the entry with `entityUUID`; see ``withImage(forKey:sourceUUID:_:)``.
    ///
    /// - Parameters:
    ///   - entityUUID: the entry's entity UUID.
    ///   - sourceUUID: the source the caller expects.
    ///   - body: reads the view.
    /// - Returns: `body`'s result, or `nil` on a miss.
    /// - Throws: what `body` throws, or ``ImageTableError`` `busy`.
    public func withImage<R>(entityUUID: UUID, sourceUUID: UUID? = nil, _ body: (ImageView) throws -> R) throws -> R? {
        var rescanned = false
        for _ in 0..<8 {
            let slot = directory.withLock { $0.slotByEntity[entityUUID] }
            if let slot {
                switch try file.read(slot: Int(slot), entity: entityUUID, source: sourceUUID, body) {
                case .hit(let result): return result
                case .changed: continue
                case .miss: break
                }
            }
            guard !rescanned, refreshIfChanged() else { return nil }
            rescanned = true
        }
        throw ImageTableError(.busy, "entry changed during eight consecutive reads", path: path)
    }

    /// The view of `key`'s entry without the seqlock check: safe only while no writer is active
    /// (a baked table). Prefer ``withImage(forKey:sourceUUID:_:)``.
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects.
    /// - Returns: the view, or `nil` on a miss.
    public func unsafeImage(forKey key: String, sourceUUID: UUID? = nil) -> ImageView? {
        try? withImage(forKey: key, sourceUUID: sourceUUID) { $0 }
    }

    /// The index fields of `key`'s entry, or `nil` when absent.
    ///
    /// - Parameter key: the entry's key.
    public func entry(forKey key: String) -> EntryInfo? {
        let entity = EntityKey.uuid(for: key)
        if let slot = directory.withLock({ $0.slotByEntity[entity] }), let info = file.entryInfo(slot: Int(slot)),
           info.entityUUID == entity {
            return info
        }
        guard refreshIfChanged(), let slot = directory.withLock({ $0.slotByEntity[entity] }) else { return nil }
        return file.entryInfo(slot: Int(slot))
    }

    /// Every entry the reader serves, in slot order, as the index is now: damaged and
    /// interrupted records are left out (they are in ``notices``).
    public func entries() -> [EntryInfo] {
        refreshIfChanged()
        let slots = directory.withLock { $0.slotByEntity.values.map(Int.init) }
        return slots.sorted().compactMap { file.entryInfo(slot: $0) }
    }

    /// The header's live use counter: the last recency stamp handed out.
    public var clock: UInt64 { file.clock }

    /// The header's live change counter: bumped whenever a writer publishes or removes an entry.
    public var changeCount: UInt64 { file.changeCount }

    /// Rescans the index if a writer changed it since the last scan.
    ///
    /// - Returns: whether it rescanned.
    @discardableResult
    public func refreshIfChanged() -> Bool {
        let now = file.changeCount
        guard directory.withLock({ $0.changeCount != now }) else { return false }
        let fresh = Self.directory(from: RecordScan(file), changeCount: now)
        directory.withLock { $0 = fresh }
        return true
    }
}

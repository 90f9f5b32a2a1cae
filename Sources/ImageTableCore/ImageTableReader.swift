import CTableSupport
import Foundation
import Synchronization

/// A table opened read-only, for runtime readers and inspection tools. Takes no lock and never
/// changes the file; reads do not count as use.
///
/// Opening reads the header and maps the file, nothing more: lookups go through the table's
/// persisted hash index (format version 2), so opening a table of a million entries costs what
/// opening one of ten does, and a lookup probes a bucket or two and checks the record it leads
/// to. Entries a writer publishes later are found at once, without polling. Every hit is
/// checked with the record's seqlock, so a concurrent writer never hands it torn pixels through
/// ``withImage(forKey:sourceUUID:_:)``.
///
/// Version 1 tables, which have no hash index, are read as before: one scan of the index at
/// open into an in-memory dictionary, rescanned when a lookup misses and the header's
/// `changeCount` shows that a writer changed something.
public final class ImageTableReader: @unchecked Sendable {
    struct Directory {
        var slotByEntity: [UUID: Int32] = [:]
        var changeCount: UInt64 = 0
    }

    /// A version 1 table's in-memory directory, shared by the reader's threads.
    final class ScannedDirectory: Sendable {
        let mutex: Mutex<Directory>
        init(_ directory: Directory) { mutex = Mutex(directory) }
        func withLock<R>(_ body: (inout Directory) -> R) -> R { mutex.withLock { body(&$0) } }
    }

    /// The table file.
    public let path: String
    /// The validated header.
    public var header: TableHeader { file.header }
    /// Records skipped as damaged or interrupted: found at open in a version 1 table, and by the
    /// last ``entries()`` in a version 2 one (whose open reads no record).
    public var notices: [TableNotice] { found.withLock { $0 } }
    let file: TableFile
    /// The device and inode of the file this reader has open, to tell when its path names
    /// another file (``isReplaced``).
    let identity: FileIdentity?
    /// The in-memory directory of a version 1 table; `nil` for version 2.
    private let directory: ScannedDirectory?
    private let found: Mutex<[TableNotice]>

    /// Opens `path` read-only.
    ///
    /// A table whose permissions let more users read it than its protection allows is refused
    /// (`insecureFile`), unless `planning` is set and a writer would mend them: its owner's
    /// writer sets such a mode back (a CI cache restored it `0644`) rather than refusing the
    /// table, so a dry run, which plans what that writer will do, reads it as the writer will,
    /// and ``writerNotices`` says what it would change. Nothing is changed either way.
    ///
    /// - Parameters:
    ///   - path: the table file.
    ///   - planning: open the table as its writer would, for a plan of the writer's work.
    /// - Throws: ``ImageTableError`` `notATable`, `corrupt`, `unsupportedVersion`, `insecureFile`, `io`.
    public init(path: String, planning: Bool = false) throws(ImageTableError) {
        self.path = path
        file = try TableFile(path: path, writable: false, asWriter: planning)
        identity = FileIdentity(descriptor: file.fd)
        if file.layout.formatVersion == 1 {
            let scan = RecordScan(file)
            found = Mutex(scan.problems.map { TableNotice(kind: $0.kind, message: "slot \($0.slot): \($0.reason); skipped it", slot: $0.slot, finding: $0.reason) })
            directory = ScannedDirectory(Self.directory(from: scan, changeCount: file.changeCount))
        } else {
            found = Mutex([])
            directory = nil
        }
    }

    private static func directory(from scan: RecordScan, changeCount: UInt64) -> Directory {
        var d = Directory(changeCount: changeCount)
        d.slotByEntity.reserveCapacity(scan.committed.count)
        for c in scan.committed { d.slotByEntity[c.entity] = Int32(c.slot) }
        return d
    }

    /// What a writer opening the table would change before its work, for a reader opened with
    /// `planning` (a `tightened-permissions` notice, phrased as what it would do); empty otherwise.
    public var writerNotices: [TableNotice] { ImageTableWriter.tightenedNotice(file) }

    /// The number of entries: as the header counts them (version 2: what the last writer
    /// counted, read without touching the index), or as the last scan found (version 1).
    public var count: Int {
        if let directory { return directory.withLock { $0.slotByEntity.count } }
        return Int(min(file.entryCount, UInt64(file.layout.capacity)))
    }

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
        guard let directory else { return try indexedImage(entityUUID, sourceUUID, body) }
        var rescanned = false
        for _ in 0..<8 {
            let slot = directory.withLock { $0.slotByEntity[entityUUID] }
            if let slot {
                switch try file.read(slot: Int(slot), entity: entityUUID, source: sourceUUID, body) {
                case .hit(let result): return result
                case .changed: continue
                case .miss, .refused: break
                }
            }
            guard !rescanned, refreshIfChanged() else { return nil }
            rescanned = true
        }
        throw ImageTableError(.busy, "entry changed during eight consecutive reads", path: path)
    }

    /// A lookup through the hash index (``TableFile/indexedRead(_:source:_:)``).
    private func indexedImage<R>(_ entity: UUID, _ source: UUID?, _ body: (ImageView) throws -> R) throws -> R? {
        try file.indexedRead(entity, source: source, body)?.result
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
        guard let directory else {
            return file.indexedSlot(of: entity).flatMap { file.entryInfo(slot: $0) }.flatMap { $0.entityUUID == entity ? $0 : nil }
        }
        if let slot = directory.withLock({ $0.slotByEntity[entity] }), let info = file.entryInfo(slot: Int(slot)),
           info.entityUUID == entity {
            return info
        }
        guard refreshIfChanged(), let slot = directory.withLock({ $0.slotByEntity[entity] }) else { return nil }
        return file.entryInfo(slot: Int(slot)).flatMap { $0.entityUUID == entity ? $0 : nil }
    }

    /// Every entry the reader serves, in slot order, as the index is now: damaged and
    /// interrupted records are left out (they are in ``notices``). In a version 2 table this
    /// reads every record in use, so it costs what the entries do; opening does not.
    public func entries() -> [EntryInfo] {
        guard let directory else {
            let scan = IndexedEntries(file)
            found.withLock { $0 = scan.notices }
            return scan.entries
        }
        refreshIfChanged()
        let slots = directory.withLock { $0.slotByEntity.values.map(Int.init) }
        return slots.sorted().compactMap { file.entryInfo(slot: $0) }
    }

    /// The header's live use counter: the last recency stamp handed out.
    public var clock: UInt64 { file.clock }

    /// The header's live change counter: bumped whenever a writer publishes or removes an entry.
    public var changeCount: UInt64 { file.changeCount }

    /// Rescans the index of a version 1 table if a writer changed it since the last scan. A
    /// version 2 table has nothing to rescan: its lookups read the index as it is.
    ///
    /// - Returns: whether it rescanned.
    @discardableResult
    public func refreshIfChanged() -> Bool {
        guard let directory else { return false }
        let now = file.changeCount
        guard directory.withLock({ $0.changeCount != now }) else { return false }
        let scan = RecordScan(file)
        let fresh = Self.directory(from: scan, changeCount: now)
        directory.withLock { $0 = fresh }
        return true
    }
}

/// The entries of a version 2 table as its readers serve them: every sound committed record in
/// use that the hash index leads to. A record the index does not lead to is a notice: either
/// another record claims its entity (the index leads there) or the index lost it (a writer
/// rebuilds the index when it opens the table).
struct IndexedEntries {
    private(set) var entries: [EntryInfo] = []
    private(set) var notices: [TableNotice] = []

    init(_ file: TableFile) {
        var entries: [EntryInfo] = [], notices: [TableNotice] = []
        func note(_ kind: TableNotice.Kind, _ slot: Int, _ reason: String, key: String? = nil) {
            notices.append(TableNotice(kind: kind, message: "slot \(slot): \(reason); skipped it", slot: slot, finding: reason, key: key))
        }
        // Whether a writer in another process holds the table: then an odd generation is a
        // write in progress, not one a crash interrupted. (A tool that holds the lock itself,
        // such as `export`, is told of interrupted writes.) Asked once, if such a record is met.
        var writerActive: Bool?
        func stable(_ slot: Int, _ generation: UInt64) -> Bool {
            itc_fence_acquire()
            return file.record(slot).generation == generation
        }
        file.forEachRecord { slot in
            let generation = file.record(slot).generation
            switch RecordScan.judge(slot: slot, of: file, checkKeys: false) {
            case .empty: return
            case .interrupted:
                if writerActive == nil { writerActive = WriterLock.isHeldByAnotherProcess(tablePath: file.path) }
                if writerActive == false { note(.discardedInterruptedWrite, slot, "interrupted write") }
            case .damaged(let reason):
                // Judged while a writer changed the record: a torn read, not damage.
                if stable(slot, generation) { note(.damagedRecord, slot, reason, key: file.record(slot).trustedKey) }
            case .committed(let entity):
                guard let info = file.entryInfo(slot: slot) else { return }
                let indexed = file.indexedSlot(of: entity)
                // A record a writer changed meanwhile says nothing about the index.
                guard stable(slot, generation) else { return }
                if indexed == slot {
                    entries.append(info)
                } else if let other = indexed {
                    note(.damagedRecord, slot, "slot \(other) also claims this entry's entity, and the index leads there", key: info.key)
                } else {
                    note(.damagedIndex, slot, "the hash index does not lead to this entry (a writer rebuilds the index)", key: info.key)
                }
            }
        }
        self.entries = entries
        self.notices = notices
    }
}

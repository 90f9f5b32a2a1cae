import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A table opened for writing: the one handle through which entries are added, replaced and
/// removed. It also reads, and its reads count as use for LRU replacement.
///
/// At most one writer per table exists across processes (an exclusive `flock` of
/// `<table>.lock`). The handle is thread-safe: slot bookkeeping is under an internal mutex, pixel
/// work is not, so several threads can fill reserved slots at once.
public final class ImageTableWriter: @unchecked Sendable {
    /// How hard a commit works to survive power loss.
    public enum Durability: Sendable {
        /// Pixels are flushed to disk before their entry is published, and the index after
        /// (`docs/FORMAT.md`, "Commit protocol"). Survives kill -9 and power loss.
        case flushed
        /// No flushes: survives kill -9 (the page cache outlives the process) but not power
        /// loss. For caches whose content can be fetched again, and for tests.
        case processCrashOnly
    }

    /// Options for opening a table.
    public struct Options: Sendable {
        /// Seconds to wait for another writer before failing with `locked`.
        public var lockTimeout: Double
        /// See ``Durability``.
        public var durability: Durability
        /// The time to record, in seconds since 1970, as the creation time of a table this
        /// handle creates and as the write time of every entry it publishes; `nil` records the
        /// current time. Reproducible output (`imagetable export`, `SOURCE_DATE_EPOCH`) fixes it,
        /// since the clock is the one thing two otherwise identical writes disagree on.
        public var timestamp: UInt64?

        /// Creates options.
        ///
        /// - Parameters:
        ///   - lockTimeout: seconds to wait for another writer.
        ///   - durability: flush policy.
        ///   - timestamp: the time to record instead of the current time; see ``timestamp``.
        public init(lockTimeout: Double = 10, durability: Durability = .flushed, timestamp: UInt64? = nil) {
            self.lockTimeout = lockTimeout
            self.durability = durability
            self.timestamp = timestamp
        }
    }

    struct State {
        var directory: SlotDirectory
        var index: IndexWriter
        /// Reservations not yet published or abandoned: entity → (slot, odd generation, staged pixels).
        var pending: [UUID: Pending] = [:]
        var closed = false
        /// `recordsInUse` as last flushed, to know when the header must be flushed with records.
        var flushedRecordsInUse: UInt64 = 0
        /// Buckets publishing wrote and reserving probed for an entry to replace since
        /// ``ImageTableWriter/releaseMappedPages(slots:records:)`` last unmapped the hash index.
        var bucketsTouched = 0
        /// Publishes writing staged pixels into the file right now, outside the lock: ``close()``
        /// waits for them, since after it nothing of this handle's may reach the file.
        var stagedWrites = 0
        /// Free slots whose entry's removal is cleared in memory but not yet flushed (an abandoned
        /// staged reservation's, a delete's until its flush): the next reservation of one flushes
        /// (or stages) as for a slot that holds an entry, since after a power cut the disk could
        /// otherwise hold the old committed record over the new key's pixels. `.flushed` only.
        /// By slot, the record's generation after the removal: a flush of an older removal of the
        /// slot must not count a newer one as flushed.
        var unflushedRemovals: [Int: UInt64] = [:]

        /// The committed entries readers see: the directory's, and the entries kept readable
        /// under a rewrite (``Pending/keepsEntry``) until it is published. What the header counts.
        var liveCount: Int { directory.count + pending.values.count { $0.holdsKeptEntry } }
        /// The slots of the reservations in flight, which no scan of the records may take for
        /// committed entries of their own (a kept entry's record is committed).
        var pendingSlots: Set<Int> { Set(pending.values.map(\.slot)) }
    }

    /// A reservation in flight.
    struct Pending {
        let slot: Int
        let generation: UInt64
        /// Where the caller writes pixels for a slot whose old entry's removal is not yet on disk
        /// (``ImageTableWriter/reserve(key:sourceUUID:evicting:staged:replacingOwn:)``); copied in at publish.
        /// ``TableLayout/writtenSlotBytes`` long, the padding zero: written as whole pages.
        let staging: UnsafeMutableRawBufferPointer?
        /// Publishes reading ``staging`` and writing it into the slot now: an abandon waits for
        /// them to end (were the slot freed meanwhile, the write would land in another key's
        /// entry, from freed memory). A count: two publishes of one reservation (a misuse,
        /// refused) may both hold it.
        var pins = 0
        /// Abandoned while pinned: the publish abandons it once its write has ended.
        var abandonWhenUnpinned = false
        /// The slot held an entry whose removal this reservation did not flush (it staged).
        var removalUnflushed = false
        /// The slot still holds the key's own committed entry, which readers go on reading
        /// until the publish removes it (a staged rewrite of the key: its pixels are in
        /// ``staging`` meanwhile, the slot untouched). A reader looking the key up during a
        /// bake that re-renders it found nothing for a whole batch.
        var keepsEntry = false
        /// The odd generation a publish began the kept entry's removal with, once it has.
        var removalBegun: UInt64?
        /// Whether the slot holds the key's old entry still, untouched.
        var holdsKeptEntry: Bool { keepsEntry && removalBegun == nil }
        /// The generation the slot's write ends with, plus one: the reservation's, or that of
        /// the removal a publish began.
        var writeGeneration: UInt64 { removalBegun ?? generation }
    }

    /// The table file.
    public let path: String
    /// The validated header.
    public var header: TableHeader { file.header }
    /// What opening did on the caller's behalf (a reset, an upgrade, discarded interrupted writes…).
    public let notices: [TableNotice]
    let file: TableFile
    let options: Options
    let state: AdaptiveMutex<State>
    private let lock: WriterLock

    /// Opens the table at `path` for writing, creating it, or rebuilding it empty when its
    /// recorded parameters differ from `format`, any header field disagrees with `format` (see
    /// ``TableHeader/disagreements(with:)``), or it is damaged beyond its index. A version 1
    /// table is rewritten as version 2 first, keeping its entries.
    ///
    /// Opening reads every record in use (not the whole capacity): it clears what a killed
    /// writer left (odd generations) and damaged records, checks that the hash index leads to
    /// every entry, and rebuilds the index if not. The pages it reads are dropped as it goes.
    ///
    /// - Parameters:
    ///   - path: the table file; its directory must exist.
    ///   - format: the format the table must have.
    ///   - options: lock timeout and durability.
    ///   - held: the table's lock, already taken (``TableLock/init(tablePath:format:timeout:)``),
    ///     which the writer adopts and releases when it closes; `nil` takes it here.
    /// - Throws: ``ImageTableError``: `locked` when another writer holds it past the timeout,
    ///   `notATable` when `path` is some other file (it is never overwritten, unless it is empty), `insecureFile`
    ///   for unsafe permissions or file types, `invalidLayout`/`invalidArgument`, `io`, `noSpace`.
    public init(path: String, format: TableFormat, options: Options = Options(), adopting held: TableLock? = nil) throws(ImageTableError) {
        try format.validate()
        let layout = try format.layout()
        self.path = path
        self.options = options
        if let held {
            lock = held.lock
        } else {
            lock = try WriterLock(tablePath: path, permissions: format.protection.permissions, timeout: options.lockTimeout)
        }
        var notices = TableCreation.removeStaleTemporaries(for: path).map {
            TableNotice(kind: .removedTemporaryFile, message: "removed \($0), left by a writer that was killed", slot: nil)
        }
        var opened: TableFile?
        var st = stat()
        let found = lstat(path, &st) == 0
        // An empty file holds nothing to lose (`touch`, a copy that met a full disk): the table
        // is made there, where it stopped a runtime cache from opening at all (`not-a-table`).
        if found && st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            notices.append(TableNotice(kind: .reset, message: "the file was empty; made the table", slot: nil))
        } else if found {
            do {
                let existing = try TableFile(path: path, writable: true)
                let disagreements = existing.header.disagreements(with: format)
                if existing.header.parametersHash != format.parametersHash {
                    // The header keeps the rendering options in its hash alone: "(A → A)" said
                    // nothing had changed.
                    let change = existing.header.summary == format.summary
                        ? "\(format.summary); a rendering option differs (fit, crop, background, corner radius or upscale), "
                            + "which the header records only in its parameter hash"
                        : "\(existing.header.summary) → \(format.summary)"
                    notices.append(TableNotice(kind: .reset, message: "format parameters changed (\(change)); rebuilt the table empty",
                                               slot: nil))
                } else if !disagreements.isEmpty {
                    // The hash says "unchanged" but a field does not: a tampered or miswritten header.
                    notices.append(TableNotice(kind: .reset, message: "the header disagrees with its own parameter hash ("
                        + disagreements.joined(separator: "; ") + "); rebuilt the table empty", slot: nil))
                } else if existing.layout.formatVersion == 1 {
                    // Said of the file the upgrade reads: the upgraded one is made with the right mode.
                    notices += Self.tightenedNotice(existing)
                    notices += try TableUpgrade.upgrade(existing, at: path)
                    opened = try TableFile(path: path, writable: true)
                } else {
                    notices += Self.tightenedNotice(existing)
                    opened = existing
                }
            } catch let error where error.code == .corrupt {
                notices.append(TableNotice(kind: .reset, message: "\(error.message); rebuilt the table empty", slot: nil))
            } catch let error where error.code == .unsupportedVersion {
                throw Self.leavingNewer(error, path: path)
            }
        } else if errno != ENOENT {
            throw Posix.error("lstat", path: path)
        }
        if opened == nil {
            try TableCreation.create(at: path, format: format, layout: layout, createdAt: options.timestamp)
            opened = try TableFile(path: path, writable: true)
        }
        file = opened!
        var state = State(directory: SlotDirectory(capacity: file.layout.capacity), index: IndexWriter(file: file))
        if file.layout.formatVersion >= 2 { try state.index.allocateActiveAreaWhereHolesFault() }
        notices += try Self.openScan(file, state: &state, durable: options.durability == .flushed)
        self.state = AdaptiveMutex(state)
        self.notices = notices
    }

    /// Gives back every reservation still open, detaches the mapping from the file, and releases
    /// the writer lock. Called on deinit if not before; idempotent.
    ///
    /// After `close()` nothing this handle does reaches the file, whichever thread does it:
    /// ``reserve(key:sourceUUID:evicting:staged:replacingOwn:)``, ``publish(_:)`` and ``delete(key:)`` throw
    /// `notWritable`, ``abandon(_:)`` does nothing, reads miss, and pixels a filler still writes
    /// into an old reservation land in private memory (the mapping is replaced by an anonymous
    /// one), since another writer may hold the lock by then.
    public func close() {
        let open: [Pending]? = state.withLock { s in
            guard !s.closed else { return nil }
            s.closed = true
            defer { s.pending = [:] }
            return Array(s.pending.values)
        }
        guard let open else { return }
        // A publish writing staged pixels through the descriptor finishes first (milliseconds):
        // its write must not land once the lock is another process's.
        while state.withLock({ $0.stagedWrites }) > 0 { usleep(100) }
        for p in open where !p.holdsKeptEntry {
            let record = file.record(p.slot)
            record.clear()
            record.endWrite(p.writeGeneration &+ 1)
            // Staged memory may still be in a filler's hands: it is left, not freed (a rare leak
            // of one image, rather than a use after free).
        }
        // Were the mapping still the file's, a filler writing late into a reservation would
        // write into a table another process may own by then: the lock is then kept until the
        // writer is deinitialised (its lock with it).
        if file.detach() { lock.release() }
    }

    deinit { close() }

    /// The error for a table that a later format version wrote: left as it is, where a corrupt
    /// one is rebuilt empty, since rebuilding it would destroy a newer tool's entries (two
    /// versions of the tool sharing an output directory or a CI cache).
    ///
    /// - Parameters:
    ///   - error: the `unsupportedVersion` error of the table's header.
    ///   - path: the table, as the caller names it.
    /// - Returns: the error, saying what to do.
    public static func leavingNewer(_ error: ImageTableError, path: String) -> ImageTableError {
        ImageTableError(.unsupportedVersion, error.message + "; it is left as it is: use a newer imagetable, or delete the table to rebuild it",
                        path: path)
    }

    /// The `tightened-permissions` notice of a file whose mode its opening set back, if it did
    /// (or, for a reader that plans as a writer, would).
    static func tightenedNotice(_ file: TableFile) -> [TableNotice] {
        guard let (from, to) = file.tightenedPermissions else { return [] }
        let done = file.writable
        return [TableNotice(kind: .tightenedPermissions, message: "permissions 0\(String(from, radix: 8)) \(done ? "were" : "are") looser than "
                            + "its protection '\(file.header.protection.rawValue)' allows; \(done ? "set them" : "would set them") "
                            + "to 0\(String(to, radix: 8))", slot: nil)]
    }

    /// The number of committed entries (those kept readable under a rewrite among them, as the
    /// header counts them).
    public var count: Int { state.withLock { $0.liveCount } }

    /// The table's capacity (`maximumCount`).
    public var capacity: Int { file.layout.capacity }

    /// The table's layout.
    public var layout: TableLayout { file.layout }

    /// How many times this handle has rebuilt the hash index (at open, or when stale buckets
    /// crowded it): for tests and benchmarks.
    public var indexRebuilds: Int { state.withLock { $0.index.rebuilds } }

    /// Whether an entry for `key` is present (and made from `sourceUUID`, when given).
    ///
    /// - Parameters:
    ///   - key: the entry's key.
    ///   - sourceUUID: the source the caller expects; a different stored source is a miss.
    public func contains(key: String, sourceUUID: UUID? = nil) -> Bool {
        entry(forKey: key).map { sourceUUID == nil || $0.sourceUUID == sourceUUID } ?? false
    }

    /// The index fields of `key`'s entry, or `nil` when absent.
    ///
    /// - Parameter key: the entry's key.
    public func entry(forKey key: String) -> EntryInfo? {
        let entity = EntityKey.uuid(for: key)
        guard let slot = state.withLock({ $0.closed ? nil : file.indexedSlot(of: entity) }) else { return nil }
        // Read outside the lock: another thread may have given the slot to another key since.
        return file.entryInfo(slot: slot).flatMap { $0.entityUUID == entity ? $0 : nil }
    }

    /// Every committed entry, in slot order. Reads every record in use.
    public func entries() -> [EntryInfo] {
        var out: [EntryInfo] = []
        out.reserveCapacity(count)
        forEachEntry { out.append($0) }
        return out
    }

    /// Runs `body` on every committed entry, in slot order, without collecting them: for a
    /// caller that keeps only part of each (a bake's plan keeps the key, source and recency).
    /// The index pages read are dropped as it goes.
    ///
    /// - Parameter body: called once per entry.
    public func forEachEntry(_ body: (EntryInfo) -> Void) {
        let limit = state.withLock { s in s.closed ? 0 : s.directory.highWater }
        file.forEachRecord { slot in
            guard slot < limit, file.record(slot).state == IndexRecord.stateCommitted, let info = file.entryInfo(slot: slot) else { return }
            body(info)
        }
    }
}

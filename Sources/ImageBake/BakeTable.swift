import Foundation
import ImageManifest
import ImageTableCore

/// One table during a bake: its writer (or, in a dry run, a read-only view), which of the keys
/// the plan writes it held, the evictions the plan chose for it, and the reservations waiting to
/// be published in a batch.
final class BakeTable: FamilyWriteTable, @unchecked Sendable {
    struct Counts {
        var written = 0
        var evicted = 0
        var pruned = 0
    }

    let format: TableFormat
    /// The ``FamilyTag`` of the manifest's family of this format: what the bake's entries record.
    let familyTag: UInt16
    /// The format's canonical parameter text, as every render job names it (computed once: it
    /// is sent with every job of the bake).
    let canonicalParameters: String
    /// The table file.
    let path: String
    /// The table file as a person would type it.
    let displayPath: String
    /// What opening reported (a rebuild, with the options that changed; interrupted writes).
    private(set) var notices: [TableNotice]
    private let table: ImageTableWriter?
    private let reader: ImageTableReader?
    private let batchLimit: Int
    /// Reservations filled and waiting to be published together.
    private struct Batch {
        var reservations: [SlotReservation] = []
        /// Slots whose pixels this process stored through the table's mapping (members drawn
        /// in scratch memory and copied in): their pages are dropped once published. A worker
        /// writes the others with `pwrite`, so this process never maps them.
        var mappedSlots: [Int] = []
        /// Bytes of staged pixels (slots whose old entry goes) the batch holds: published early
        /// past ``stagedLimit``, so a batch of large images does not hold them all in memory.
        var stagedBytes = 0
    }
    private let pending = AdaptiveMutex(Batch())
    /// Staged pixels a batch holds at most: a table holds 32 MiB of them while one batch is
    /// published and the next fills, and 16 MiB more for each dispatcher that fills another
    /// batch before then and waits.
    private static let stagedLimit = 16 << 20
    private let publisher = BatchPublisher()
    /// The entries the plan chose to evict, in order: taken one by one by new keys that find no
    /// free slot, so the bake evicts exactly what the plan says whatever the order of the jobs.
    private let victims = AdaptiveMutex<ArraySlice<String>>([])
    /// Whether the plan evicts from this table: then every slot is reserved once its source has
    /// decoded (``reserve(key:sourceUUID:evicting:)``).
    private var evictsByPlan = false
    /// The keys the table held when the plan was made and that the plan writes again
    /// (``plan(evictions:replacing:)``), for ``holds(key:)``; `nil` before.
    private var replacingAtPlan: Set<String>?
    let counts = AdaptiveMutex(Counts())

    /// Opens the table for writing (creating or rebuilding it), or read-only for a dry run.
    ///
    /// - Parameters:
    ///   - format: the table's format.
    ///   - manifest: the manifest, for the table's paths.
    ///   - options: lock timeout, durability, dry run.
    ///   - lock: the table's lock, taken already, which its writer adopts.
    /// - Throws: the core's ``ImageTableError``, naming the table as a person would type it.
    init(_ format: TableFormat, of manifest: Manifest, options: BakeOptions, adopting lock: TableLock? = nil) throws(ImageTableError) {
        self.format = format
        familyTag = FamilyTag.of(manifest.families.first { $0.name == format.family }?.formats ?? [format])
        canonicalParameters = format.canonicalParameters
        path = manifest.tablePath(of: format)
        displayPath = manifest.displayPath(of: format)
        batchLimit = max(1, min(options.publishBatch, format.capacity / 4))
        if options.dryRun {
            (reader, notices) = try Self.planningView(path: path, format: format, displayPath: displayPath)
            table = nil
        } else {
            do {
                table = try ImageTableWriter(path: path, format: format,
                                             options: .init(lockTimeout: options.lockTimeout, durability: options.durability), adopting: lock)
            } catch {
                throw error.at(displayPath)
            }
            reader = nil
            notices = table!.notices
        }
    }

    /// A dry run's view of the table, opened as the bake's writer would open it and failing where
    /// it would fail: a table the writer rebuilds (other parameters, a damaged header) or makes
    /// (an empty file) is planned as empty, with the writer's notice in the conditional; one whose
    /// permissions it would tighten is planned from its entries; one it cannot open at all (a
    /// directory, not a table, writable by others) stops the dry run as it stops the bake, where
    /// the dry run planned it as empty and exited 0.
    private static func planningView(path: String, format: TableFormat, displayPath: String)
        throws(ImageTableError) -> (ImageTableReader?, [TableNotice]) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            // As the writer: a table that is not there is made; one that cannot be looked at stops it.
            guard errno == ENOENT else { throw ImageTableError.system("lstat", path: displayPath) }
            return (nil, [])
        }
        if st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            return (nil, [TableNotice(kind: .reset, message: "the file is empty; would make the table", slot: nil)])
        }
        do {
            let existing = try ImageTableReader(path: path, planning: true)
            guard existing.header.matches(format) else {
                return (nil, [TableNotice(kind: .reset, message: "format parameters changed; would rebuild the table empty", slot: nil)])
            }
            return (existing, existing.writerNotices)
        } catch where error.code == .corrupt {
            return (nil, [TableNotice(kind: .reset, message: "\(error.message); would rebuild the table empty", slot: nil)])
        } catch where error.code == .unsupportedVersion {
            throw ImageTableWriter.leavingNewer(error, path: displayPath)
        } catch {
            throw error.at(displayPath)
        }
    }

    /// Names the options that changed in a rebuild notice, once the bake state (opened after the
    /// tables' locks are held) says what the table's parameters were at the last bake.
    ///
    /// - Parameter previous: the table's canonical parameters at the last bake, if known.
    func explainRebuild(previous: String?) {
        guard let previous, let old = try? TableFormat(canonicalParameters: previous, scale: format.scale) else { return }
        let changed = format.changes(from: old)
        guard !changed.isEmpty else { return }
        let why = "format options changed (\(changed.joined(separator: ", ")))"
        notices = notices.map { notice in
            guard notice.kind == .reset else { return notice }
            return TableNotice(kind: .reset, message: why + (table == nil ? "; would rebuild the table empty" : "; rebuilt the table empty"),
                               slot: nil)
        }
    }

    /// The keys of the entries ``forEachHeld(_:)`` found drawn beside other formats than the
    /// family has now.
    private var redrawKeys: Set<String> = []

    /// No source's fingerprint: what an entry to be drawn again reads as made from.
    private static let noSource = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Calls `body` with the key, source UUID, recency and recorded source modification time of
    /// every entry the table holds now.
    ///
    /// An entry drawn beside other formats than the family has now (its ``FamilyTag`` is
    /// another's) holds pixels a fresh bake would not make: it is given as made from no source,
    /// so the plan decodes its source as a changed one and replaces it in its own slot (readers
    /// see the old pixels until then), and counted for ``noteRedraws(planned:)``. One whose tag
    /// is unknown (written before tags were recorded) is taken as drawn for the family as it is,
    /// and kept for ``adoptFamilyTag()``.
    func forEachHeld(_ body: (String, UUID, UInt64, Int64) -> Void) {
        let tag = familyTag
        var redraws: Set<String> = [], untagged: [Int32] = []
        func source(_ e: EntryInfo) -> UUID {
            if e.familyTag == FamilyTag.unknown { untagged.append(Int32(e.slot)) }
            guard e.familyTag != FamilyTag.unknown, e.familyTag != tag else { return e.sourceUUID }
            redraws.insert(e.key)
            return Self.noSource
        }
        if let table {
            table.forEachEntry { body($0.key, source($0), $0.recency, $0.sourceModifiedNs) }
        } else if let reader {
            for e in reader.entries() { body(e.key, source(e), e.recency, e.sourceModifiedNs) }
        }
        redrawKeys = redraws
        untaggedSlots = untagged
    }

    /// The slots of the entries ``forEachHeld(_:)`` found with no family tag.
    private var untaggedSlots: [Int32] = []

    /// Tags the entries written before tags were recorded with the family's, a batch at a time
    /// (``ImageTableWriter/adoptFamilyTag(_:slots:)``): taken as drawn for the family as it is,
    /// they are drawn again when it changes later. Before the run, after the plan's prunes.
    ///
    /// - Throws: the core's ``ImageTableError`` when the records cannot be flushed.
    func adoptFamilyTag() throws(ImageTableError) {
        defer { untaggedSlots = [] }
        let slots = untaggedSlots, tag = familyTag
        try inRecordBatches(slots.count, recording: "the family tag") { table, batch throws(ImageTableError) in
            try table.adoptFamilyTag(tag, slots: slots[batch].map(Int.init))
        }
    }

    /// Says how many of the entries ``forEachHeld(_:)`` found drawn beside other formats the
    /// plan draws again, and how many it cannot (their sources gone, deferred or failing).
    ///
    /// - Parameter planned: the keys of held entries the plan writes again.
    func noteRedraws(planned: Set<String>) {
        guard !redrawKeys.isEmpty else { return }
        let drawn = redrawKeys.count { planned.contains($0) }, kept = redrawKeys.count - drawn
        redrawKeys = []
        let entries = drawn + kept == 1 ? "1 entry was" : "\(drawn + kept) entries were"
        var message = "\(entries) drawn beside other formats than its family has now (one added, removed or resized since), which "
            + "changes their pixels; \(table == nil ? "would draw" : "drew") \(drawn) again"
        if kept > 0 {
            message += "; \(kept) cannot be (\(kept == 1 ? "its source is" : "their sources are") gone, deferred or failing) and "
                + "\(kept == 1 ? "stays" : "stay") until \(kept == 1 ? "it is" : "they are") baked or pruned (bake --prune)"
        }
        notices.append(TableNotice(kind: .rerendered, message: message, slot: nil))
    }

    /// Backs the slots the plan fills (`entries`, the entries the table holds after the bake)
    /// before any worker writes, so the file is not grown under the workers' writes. Only an
    /// optimisation: on a disk too full for all of them, slots grow one batch at a time as before
    /// and the bake stops with `no-space` where it runs out.
    func preallocate(entries: Int) { try? table?.preallocate(slots: entries) }

    /// Sets the evictions the plan chose, and which of the keys it writes the table held when it
    /// chose them. Called once, before the run's threads start.
    ///
    /// - Parameters:
    ///   - evictions: the entries to evict, in order.
    ///   - replacing: the keys of the plan's writes that the table held (a set of those alone,
    ///     not all it held, is kept for the run).
    func plan(evictions: [String], replacing: Set<String>) {
        victims.withLock { $0 = evictions[...] }
        evictsByPlan = !evictions.isEmpty
        replacingAtPlan = replacing
    }

    /// Whether the table holds `key`, as the plan saw it. Exact for every key the plan writes
    /// into this table, the only keys a bake asks about (a job's `FamilyWrite` asks each table
    /// it writes, for its own key): each is written by its own job alone, and the plan evicts and
    /// prunes only keys that have no job, so a key's entry cannot come or go before its job runs.
    /// Any other key is answered `false`: only the planned writes the table held are kept for the
    /// run. Answered without the table's lock, which every job of the bake takes and which would
    /// otherwise be taken twice per source and table.
    func holds(key: String) -> Bool {
        guard let replacingAtPlan else { return table?.contains(key: key) ?? false }
        return replacingAtPlan.contains(key)
    }

    /// Reserves a slot: the key's own or a free one; with `evicting`, the next entry the plan
    /// chose to evict when there is none. Publishes this table's pending batch and retries while
    /// every slot is held by writes in flight (a small table with many workers).
    ///
    /// In a table whose plan evicts, a reservation before decoding (not `evicting`) gets nothing:
    /// each source takes its slot once it has decoded, a free one first. Were a free slot taken
    /// before decoding by a source that then fails, a source that decoded meanwhile would find
    /// none and evict an entry, while that slot ends up empty: whether an entry was lost would
    /// depend on which worker answered first.
    ///
    /// - Returns: the reservation, or `nil` when the table is full and `evicting` is false, or
    ///   its plan evicts.
    /// - Throws: the core's ``ImageTableError`` when the table cannot give a slot at all.
    func reserve(key: String, sourceUUID: UUID, evicting: Bool) throws(ImageTableError) -> SlotReservation? {
        guard var reservation = try reserveSlot(key: key, sourceUUID: sourceUUID, evicting: evicting) else { return nil }
        reservation.familyTag = familyTag
        return reservation
    }

    private func reserveSlot(key: String, sourceUUID: UUID, evicting: Bool) throws(ImageTableError) -> SlotReservation? {
        if evictsByPlan && !evicting { return nil }
        for _ in 0..<2000 {
            do throws(ImageTableError) {
                do throws(ImageTableError) {
                    // Only a reservation made once the source has decoded (`evicting`) may stage:
                    // the others may be handed to a worker, which writes the slot itself.
                    return try table!.reserve(key: key, sourceUUID: sourceUUID, evicting: .none, staged: evicting, replacingOwn: evicting)
                } catch where error.code == .full && evicting {
                    guard let victim = victims.withLock({ $0.popFirst() }) else { throw error }
                    let reservation = try table!.reserve(key: key, sourceUUID: sourceUUID, evicting: .entry(key: victim), staged: true)
                    if reservation.evictedKey != nil { counts.withLock { $0.evicted += 1 } }
                    return reservation
                }
            } catch let error where error.code == .full {
                if evicting { throw error.explained("no planned eviction is left for \(PrintableText.quoted(key))").at(displayPath) }
                return nil
            } catch let error where error.code == .busy {
                try publishPending()
                usleep(2000)
            } catch {
                throw error.explained("cannot reserve a slot for \(PrintableText.quoted(key))").at(displayPath)
            }
        }
        throw ImageTableError(.busy, "no slot became free for \(PrintableText.quoted(key))", path: displayPath)
    }

    /// Deletes the entries the plan prunes (sources gone, `--prune`), before any write.
    func prune(_ keys: [String]) throws(ImageTableError) {
        guard !keys.isEmpty, let table else { return }
        do {
            let removed = try table.delete(keys: keys)
            counts.withLock { $0.pruned += removed }
        } catch {
            throw error.explained("could not prune \(keys.count) entries").at(displayPath)
        }
    }

    /// Records the current modification time of sources whose entries the plan keeps as they
    /// are (touched, not changed: ``BakePlanner/retimes(of:in:change:)``), in the records alone.
    ///
    /// A batch at a time, each batch's records flushed once and then unmapped with the index
    /// pages its lookups mapped, as a published batch's are: a bake after every source's time
    /// moved (a CI cache restored, a project copied) updates every entry, and would otherwise
    /// keep every record and most of the hash index resident to its end.
    ///
    /// - Parameter updates: keys, in slot order, with the time each entry should record.
    /// - Throws: the core's ``ImageTableError`` when the records cannot be flushed.
    func retime(_ updates: BakePlanner.Retimes) throws(ImageTableError) {
        try inRecordBatches(updates.count, recording: "the modification time") { table, batch throws(ImageTableError) in
            try table.updateSourceModified(Array(updates[batch]))
        }
    }

    /// Changes records in place a batch at a time (``retime(_:)``, ``adoptFamilyTag()``):
    /// `change` changes the records of the batch's positions and returns their slots, which its
    /// writer has flushed once; they are unmapped with the index pages its lookups mapped.
    ///
    /// - Parameters:
    ///   - count: how many records to change.
    ///   - what: the field changed, for the error.
    ///   - change: changes one batch, given by its positions in `0 ..< count`.
    /// - Throws: the core's ``ImageTableError`` when the records cannot be flushed.
    private func inRecordBatches(_ count: Int, recording what: String,
                                 _ change: (ImageTableWriter, Range<Int>) throws(ImageTableError) -> [Int]) throws(ImageTableError) {
        guard let table else { return }
        var start = 0
        while start < count {
            let end = min(start + Self.recordBatch, count)
            do {
                table.releaseMappedPages(slots: [], records: try change(table, start..<end))
            } catch {
                throw error.explained("could not record \(what) of \(end - start) entries").at(displayPath)
            }
            start = end
        }
    }

    /// Records ``inRecordBatches(_:recording:_:)`` changes with one flush. A record read maps
    /// the 64 KiB around it, so a batch maps at most 64 MiB of records before they are unmapped,
    /// and far less when its keys, in slot order, are neighbours (every entry's time moved:
    /// 256 KiB); a million updates cost a thousand flushes.
    private static let recordBatch = 1024

    /// Queues a filled reservation; once the batch is full, or the staged pixels it holds pass
    /// ``stagedLimit``, hands it to a background publisher and returns.
    ///
    /// A batch is published (its slots flushed, then its records) while the dispatchers go on
    /// placing sources: a dispatcher that flushed a batch itself left its worker without new
    /// sources for the milliseconds a flush takes. One batch of a table is published at a time;
    /// a dispatcher that fills the next before it is done waits for it (``BatchPublisher``).
    ///
    /// - Parameters:
    ///   - reservation: the filled reservation.
    ///   - mappedHere: whether this process stored its pixels through the table's mapping.
    /// - Throws: the error of an earlier batch's publishing, which stops the bake.
    func enqueue(_ reservation: SlotReservation, mappedHere: Bool) throws(ImageTableError) {
        let batch: Batch? = pending.withLock { p in
            p.reservations.append(reservation)
            if mappedHere { p.mappedSlots.append(reservation.slot) }
            // A staged slot's memory runs to the end of its last page (TableLayout.writtenSlotBytes).
            if reservation.isStaged { p.stagedBytes += table?.layout.writtenSlotBytes ?? reservation.pixels.count }
            guard p.reservations.count >= batchLimit || p.stagedBytes >= Self.stagedLimit else { return nil }
            defer { p = Batch() }
            return p
        }
        if let batch { publisher.submit { [self] () throws(ImageTableError) in try publish(batch) } }
        if let error = publisher.failure { throw error }
    }

    /// Publishes whatever is queued, and waits until every batch handed to the background
    /// publisher is published.
    ///
    /// - Throws: the first error of any batch's publishing.
    func publishPending() throws(ImageTableError) {
        let batch = pending.withLock { p in
            defer { p = Batch() }
            return p
        }
        try publisher.drain { [self] () throws(ImageTableError) in
            if !batch.reservations.isEmpty { try publish(batch) }
        }
    }

    func abandon(_ reservation: SlotReservation) { table?.abandon(reservation) }

    /// Entries now in the table.
    var entryCount: Int { table?.count ?? reader?.count ?? 0 }

    func close() { table?.close() }

    private func publish(_ batch: Batch) throws(ImageTableError) {
        do throws(ImageTableError) {
            try table!.publish(batch.reservations)
            table!.releaseMappedPages(slots: batch.mappedSlots, records: batch.reservations.map(\.slot))
        } catch {
            throw error.explained("could not commit \(batch.reservations.count) entries").at(displayPath)
        }
        counts.withLock { $0.written += batch.reservations.count }
    }
}

import Foundation
import ImageManifest
import ImageTableCore
import Synchronization

/// One table during a bake: its writer handle (or, in a dry run, a read-only view), how to render
/// into it, and the reservations waiting to be published in a batch.
final class BakeTable: FamilyWriteTable, @unchecked Sendable {
    struct Counts {
        var written = 0
        var evicted = 0
        /// Dry runs: keys that would be added, not replaced.
        var plannedNew = 0
    }

    let format: TableFormat
    /// The table file.
    let path: String
    /// The table file as a person would type it.
    let displayPath: String
    let notices: [TableNotice]
    private let table: ImageTableWriter?
    private let reader: ImageTableReader?
    private let batchLimit: Int
    private let pending = Mutex<[SlotReservation]>([])
    let counts = Mutex(Counts())

    /// Opens the table for writing (creating or rebuilding it), or read-only for a dry run.
    ///
    /// - Throws: the core's ``ImageTableError``, naming the table as a person would type it.
    init(_ format: TableFormat, of manifest: Manifest, options: BakeOptions) throws(ImageTableError) {
        self.format = format
        path = manifest.tablePath(of: format)
        displayPath = manifest.displayPath(of: format)
        batchLimit = max(1, min(options.publishBatch, format.capacity / 4))
        if options.dryRun {
            let existing = try? ImageTableReader(path: path)
            reader = existing?.header.parametersHash == format.parametersHash ? existing : nil
            table = nil
            notices = existing != nil && reader == nil ? [TableNotice(kind: .reset, message: "would rebuild: parameters changed", slot: nil)] : []
        } else {
            do {
                table = try ImageTableWriter(path: path, format: format,
                                       options: .init(lockTimeout: options.lockTimeout, durability: options.durability))
            } catch {
                throw error.at(displayPath)
            }
            reader = nil
            notices = table!.notices
        }
    }

    /// Whether the table already holds `key` made from `source`; a writer also counts the use,
    /// so that entries of sources that still exist outlive those of removed ones.
    func isFresh(key: String, source: UUID) -> Bool {
        if let table { return table.touch(key: key, sourceUUID: source) }
        guard let entry = reader?.entry(forKey: key) else {
            counts.withLock { $0.plannedNew += 1 }
            return false
        }
        return entry.sourceUUID == source
    }

    /// Reserves a slot, publishing this table's pending batch and retrying while every slot is
    /// held by writes in flight (a small table with many workers).
    ///
    /// - Parameters:
    ///   - key: the source's key.
    ///   - sourceUUID: its fingerprint.
    ///   - evicting: whether a full table may replace its least recently used entry now.
    /// - Returns: the reservation, or `nil` when the table is full and `evicting` is false.
    /// - Throws: the core's ``ImageTableError`` when the table cannot give a slot at all.
    func reserve(key: String, sourceUUID: UUID, evicting: Bool) throws(ImageTableError) -> SlotReservation? {
        for _ in 0..<2000 {
            do throws(ImageTableError) {
                let reservation = try table!.reserve(key: key, sourceUUID: sourceUUID, evicting: evicting)
                if reservation.evictedKey != nil { counts.withLock { $0.evicted += 1 } }
                return reservation
            } catch let error where error.code == .full {
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


    /// Queues a filled reservation; publishes the batch once it is full.
    func enqueue(_ reservation: SlotReservation) throws(ImageTableError) {
        let batch: [SlotReservation]? = pending.withLock { p in
            p.append(reservation)
            guard p.count >= batchLimit else { return nil }
            defer { p = [] }
            return p
        }
        if let batch { try publish(batch) }
    }

    /// Publishes whatever is queued.
    func publishPending() throws(ImageTableError) {
        let batch = pending.withLock { p in
            defer { p = [] }
            return p
        }
        if !batch.isEmpty { try publish(batch) }
    }

    func abandon(_ reservation: SlotReservation) { table?.abandon(reservation) }

    /// Entries now in the table.
    var entryCount: Int { table?.count ?? reader?.count ?? 0 }

    func close() { table?.close() }

    private func publish(_ batch: [SlotReservation]) throws(ImageTableError) {
        do throws(ImageTableError) {
            try table!.publish(batch)
            table!.releaseMappedPages(slots: batch.map(\.slot))
        } catch {
            throw error.explained("could not commit \(batch.count) entries").at(displayPath)
        }
        counts.withLock { $0.written += batch.count }
    }
}

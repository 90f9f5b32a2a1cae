import Foundation
import ImageManifest
import ImageTableCore

/// What an export did: the index it wrote, which also lists every table.
public struct ExportSummary: Sendable {
    /// The destination directory, as given.
    public let directory: String
    /// The index written into it.
    public let index: ExportIndex
}

/// `imagetable export`: a compact, reproducible copy of a manifest's tables, for an app bundle, a
/// container image or a release artifact (`docs/CLI.md`, "export").
///
/// Each table is read as any reader reads it and written anew through ``ImageTableWriter``, so
/// the copy is an ordinary table of the same format, parameter hash and capacity, which a bake or
/// a cache opens as its own. What differs from one bake to the next is made canonical: entries go
/// to slots in the order of their keys' UTF-8 bytes (slot 0 first, no gaps, the file ends after
/// the last), every time recorded is the one given (`SOURCE_DATE_EPOCH`), recency counts up in
/// slot order, and row padding is zero. Bakes of the same sources and manifest therefore export
/// the same bytes, whatever their `--jobs`, history or directory, on machines of one page size.
public enum TableExport {
    /// Exports the tables of `manifest` into `directory`, replacing it whole.
    ///
    /// The tables' writer locks are held while they are read, so a bake is seen finished or not
    /// begun, never halfway (a bake locks every table of its manifest before it starts). The
    /// new set is written beside `directory` and swapped in at once (``ExportDirectory``).
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest whose tables a bake has made.
    ///   - directory: the destination; absent, empty, or an earlier export.
    ///   - timestamp: the time to record, seconds since 1970.
    ///   - lockTimeout: seconds to wait for a bake that holds a table.
    /// - Returns: the index it wrote.
    /// - Throws: ``ImageTableError``: `notAnExport` for a destination of other files, `shardMismatch`
    ///   for the tables of one shard of a sharded bake, `notFound`
    ///   for a table no bake has made, `staleTable` for one made with other parameters, `locked`,
    ///   `damagedRecord`, `interruptedWrite` or `pixelChecksumMismatch` for a table that is not
    ///   sound (`verify` says more), and what reading and writing files throw.
    public static func export(_ manifest: Manifest, to directory: String, timestamp: UInt64,
                              lockTimeout: Double) throws(ImageTableError) -> ExportSummary {
        let destination = try ExportDirectory(directory)
        // One shard holds part of the sources: exported, it shipped as if it were all of them.
        if let marker = try ShardMarker.read(in: manifest.outputPath) {
            throw ImageTableError(.shardMismatch, "the directory holds shard \(marker.shard)/\(marker.count) of a sharded bake, "
                                  + "not every source; merge the shards (imagetable merge OUT DIR...) and export OUT", path: manifest.displayOutput)
        }
        // Said here, before any lock: a missing output directory would fail taking one.
        for format in manifest.formats where !FileManager.default.fileExists(atPath: manifest.tablePath(of: format)) {
            throw ImageTableError(.notFound, "no such table; bake the manifest before exporting it", path: manifest.displayPath(of: format))
        }
        // The bake's order, so that an export and a bake waiting for each other's locks cannot
        // each hold what the other needs.
        // A table the user may read but not write (a CI cache, another user's bake) has a lock
        // file this process cannot open: it is read without its lock, as `merge` reads such inputs.
        var locks: [TableLock] = []
        for format in manifest.formats {
            do throws(ImageTableError) {
                if let lock = try TableLock.unlessReadOnly(tablePath: manifest.tablePath(of: format), timeout: lockTimeout) {
                    locks.append(lock)
                }
            } catch {
                locks.forEach { $0.release() }
                // Named as the bake names it (relative to the manifest's directory, as given).
                throw error.path == manifest.tablePath(of: format) ? error.at(manifest.displayPath(of: format)) : error
            }
        }
        defer { locks.forEach { $0.release() } }
        let staging = try destination.makeStaging()
        var tables: [ExportIndex.Table] = []
        do throws(ImageTableError) {
            for family in manifest.families {
                let tag = FamilyTag.of(family.formats)
                for format in family.formats {
                    tables.append(try copy(format, from: manifest.tablePath(of: format), display: manifest.displayPath(of: format),
                                           into: staging, timestamp: timestamp, familyTag: tag, previous: {
                        // Only for a stale table's message: what the last bake recorded it was made with.
                        (try? BakeState(directory: manifest.outputPath, root: manifest.directory, readOnly: true))?
                            .parameters(ofTable: format.fileName)
                    }))
                }
            }
            locks.forEach { $0.release() }
            tables.sort { Array($0.file.utf8).lexicographicallyPrecedes(Array($1.file.utf8)) }
            let index = ExportIndex(sourceDateEpoch: timestamp, tables: tables)
            let indexPath = staging + "/" + ExportIndex.fileName
            try ExportFiles.create(indexPath, holding: index.encoded(), mode: 0o644)
            ExportFiles.setTime(indexPath, seconds: timestamp)
            guard chmod(staging, 0o755) == 0 else { throw ImageTableError.system("chmod", path: staging) }
            ExportFiles.setTime(staging, seconds: timestamp)
            ExportFiles.sync(staging)
            try destination.install(staging, lockTimeout: lockTimeout)
            return ExportSummary(directory: directory, index: index)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error.relocated(from: staging, to: directory)
        }
    }

    /// What differs between a table and the format the manifest gives it: the header's own
    /// fields when they differ; else the options the bake state recorded at the last bake, when
    /// it did; else which options could have changed (they are in the header's hash alone).
    static func staleness(of header: TableHeader, _ format: TableFormat, previous: () -> String?) -> String {
        let fields = header.disagreements(with: format)
        if !fields.isEmpty { return fields.joined(separator: "; ") }
        if let previous = previous(), let old = try? TableFormat(canonicalParameters: previous, scale: format.scale) {
            let changes = format.changes(from: old)
            if !changes.isEmpty { return changes.joined(separator: ", ") }
        }
        return "how its images are drawn: fit, crop, background, corner radius, upscale or the rendering version"
    }

    /// Copies one table into `staging`, canonically.
    ///
    /// - Parameters:
    ///   - familyTag: the ``FamilyTag`` of the manifest's family: a table with entries drawn
    ///     beside other formats is stale.
    ///   - previous: the table's canonical parameters at the last bake, if known; asked only to
    ///     say what changed in a stale table.
    private static func copy(_ format: TableFormat, from path: String, display: String, into staging: String, timestamp: UInt64,
                             familyTag: UInt16, previous: () -> String?) throws(ImageTableError) -> ExportIndex.Table {
        let reader: ImageTableReader
        do {
            reader = try ImageTableReader(path: path)
        } catch let error where error.code == .notFound {
            throw ImageTableError(.notFound, "no such table; bake the manifest before exporting it", path: display)
        } catch {
            throw error.at(display)
        }
        guard reader.header.matches(format) else {
            throw ImageTableError(.staleTable, "the table was made with other parameters than the manifest gives it ("
                                  + staleness(of: reader.header, format, previous: previous) + "); bake the manifest first", path: display)
        }
        // Listed first: a table's notices of damaged or interrupted records come from its listing.
        let entries = reader.entries().sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        let drawnElsewhere = entries.count { $0.familyTag != FamilyTag.unknown && $0.familyTag != familyTag }
        if drawnElsewhere > 0 {
            throw ImageTableError(.staleTable, "\(drawnElsewhere) of its entries \(drawnElsewhere == 1 ? "was" : "were") drawn beside other "
                                  + "formats than its family has now (one added, removed or resized since), which changes their pixels; "
                                  + "bake the manifest first (and with --prune, for entries whose sources are gone)", path: display)
        }
        let codes: [TableNotice.Kind: ImageTableError.Code] = [.damagedRecord: .damagedRecord, .damagedIndex: .damagedIndex,
                                                                .discardedInterruptedWrite: .interruptedWrite]
        if let notice = reader.notices.first(where: { codes[$0.kind] != nil }) {
            // The reader skipped the entry; the export skips nothing, it refuses.
            throw ImageTableError(codes[notice.kind]!, "\(notice.located()); nothing exported: run imagetable verify, and bake again before exporting",
                                  path: display)
        }
        let target = staging + "/" + format.fileName
        let writer = try ImageTableWriter(path: target, format: format,
                                          options: .init(lockTimeout: 0, durability: .processCrashOnly, timestamp: timestamp))
        do throws(ImageTableError) {
            // Tagged with the family as it is: every entry was checked to be drawn for it (or untagged,
            // so taken as drawn for it), and a table baked into after the export still sees later changes.
            for entry in entries { try copy(entry, from: reader, to: writer, familyTag: familyTag, display: display) }
        } catch {
            writer.close()
            throw error
        }
        let size = writer.layout.slotOffset(entries.count)
        writer.close()
        // The writer's lock file is the only thing beside the table that the export did not ask for.
        unlink(target + ".lock")
        // Writers grow a file by several slots at a time; the export ends at its last entry.
        try ExportFiles.truncate(target, to: size)
        ExportFiles.setTime(target, seconds: timestamp)
        let digest: String
        do {
            digest = try SHA256.digest(ofFileAt: target)
        } catch {
            throw ImageTableError(.io, "cannot read the exported table back: \(error.localizedDescription)", path: target)
        }
        return ExportIndex.Table(file: format.fileName, format: format.name, family: format.family, scale: format.scale,
                                 style: format.style.rawValue, entries: entries.count, bytes: size, sha256: digest)
    }

    /// Copies one entry, checking its pixels against their checksum first: an export must not
    /// ship damage that `verify` would report. The pixels are copied out of the seqlocked read
    /// and written after it, since a read may run its closure again.
    private static func copy(_ entry: EntryInfo, from reader: ImageTableReader, to writer: ImageTableWriter, familyTag: UInt16,
                             display: String) throws(ImageTableError) {
        let read = try? reader.withImage(entityUUID: entry.entityUUID, sourceUUID: entry.sourceUUID) { view in
            (pixels: [UInt8](view.bytes), bytesPerRow: view.bytesPerRow, contentRect: view.contentRect)
        }
        guard let read else {
            throw ImageTableError(.entryUnavailable, "slot \(entry.slot) ('\(entry.key)') vanished while it was read", path: display)
        }
        guard CRC32.checksum(read.pixels) == entry.pixelChecksum else {
            throw ImageTableError(.pixelChecksumMismatch, "slot \(entry.slot) ('\(entry.key)'): pixel checksum mismatch; "
                                  + "run imagetable verify --repair, and bake again before exporting", path: display)
        }
        let written = read.pixels.withUnsafeBytes { pixels in
            Result { () throws(ImageTableError) in
                try writer.write(key: entry.key, sourceUUID: entry.sourceUUID, pixels: pixels, bytesPerRow: read.bytesPerRow,
                                 contentRect: read.contentRect, familyTag: familyTag)
            }
        }
        _ = try written.get()
    }
}

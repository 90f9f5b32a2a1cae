import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rewrites a version 1 table as version 2, keeping its entries: what the first writer to open
/// a version 1 table does, under the table's lock.
///
/// The new file is built beside the old one under a temporary name (``TableBuilder``), flushed,
/// and renamed over it, as a rebuilt table is: a writer killed at any instant leaves the old
/// table or the new one, and a reader that has the old one mapped keeps reading it. Entries keep
/// their keys, sources, pixels, rectangles, times and recency, in their slots' order; interrupted
/// writes and damaged records are not carried over.
enum TableUpgrade {
    /// Upgrades `existing`, the open version 1 table at `path`.
    ///
    /// - Returns: notices: the upgrade, and every record left behind.
    /// - Throws: ``ImageTableError`` (`io`, `noSpace`) when the new file cannot be written; the
    ///   old table is then left as it was.
    static func upgrade(_ existing: TableFile, at path: String) throws(ImageTableError) -> [TableNotice] {
        let scan = RecordScan(existing)
        let header = try TableBuilder.header(like: existing.header, createdAt: existing.header.createdAt)
        let temp = "\(Directories.parent(of: path))/\(TableCreation.temporaryPrefix(for: path))\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do throws(ImageTableError) {
            let builder = try TableBuilder(path: temp, header: header)
            for committed in scan.committed.sorted(by: { $0.slot < $1.slot }) {
                guard let info = existing.entryInfo(slot: committed.slot) else { continue }
                let pixels = UnsafeRawBufferPointer(start: existing.slot(committed.slot), count: existing.layout.imageBytes)
                try builder.append(TableBuilder.Entry(info: info, recency: info.recency), pixels: pixels)
                existing.dropPages(slot: committed.slot)
            }
            try builder.finish(clock: existing.clock)
            guard rename(temp, path) == 0 else { throw Posix.error("rename", path: path) }
            Posix.syncDirectory(of: path)
            return [TableNotice(kind: .upgraded, message: "upgraded from format version 1 to 2, keeping \(builder.count) "
                                + "\(builder.count == 1 ? "entry" : "entries")", slot: nil)]
                + scan.problems.map { TableNotice(kind: $0.kind, message: "slot \($0.slot): \($0.reason); dropped it", slot: $0.slot) }
        } catch {
            unlink(temp)
            throw error
        }
    }
}

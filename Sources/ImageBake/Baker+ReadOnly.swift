import Foundation
import ImageManifest
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bake whose output directory (or a table in it) is on a file system mounted read-only, or
/// that this user may not write.
///
/// A bake takes each table's writer lock, which opens its lock file for writing, so on a
/// read-only mount it failed at once with "open lock file failed: Read-only file system", even
/// when every table was up to date: a CI job that bakes as a check, over tables restored onto a
/// read-only volume, failed where `make` over an up-to-date tree succeeds. Such a bake now plans
/// as `--dry-run` does (tables and state read, nothing locked or written, no writer can exist on
/// a read-only mount): with nothing to write it succeeds with a warning, and otherwise it stops
/// before writing, saying what the bake would write.
extension Baker {
    /// Whether `path` exists on a file system mounted read-only (`statvfs`'s `ST_RDONLY`).
    ///
    /// - Parameter path: the output directory.
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return false }
        return info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Why the bake of `manifest` can write nothing, or `nil` when it can: its output
    /// directory, or one of its tables (a file bind-mounted read-only into a writable
    /// directory), is on a read-only file system, or this user may not write the directory, a
    /// table or its lock file (a cron job run as another user than the one who restored the
    /// tables failed with "Permission denied" though nothing needed writing).
    ///
    /// - Parameter manifest: the manifest baked.
    /// - Returns: the reason, as the subject of a sentence ("the output directory is on a
    ///   read-only file system").
    static func unwritableOutput(_ manifest: Manifest) -> String? {
        let tables = manifest.formats.map { manifest.tablePath(of: $0) }
        if isOnReadOnlyFileSystem(manifest.outputPath) { return "the output directory is on a read-only file system" }
        if tables.contains(where: isOnReadOnlyFileSystem) { return "a table of the output directory is on a read-only file system" }
        let uid = geteuid()
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        // The directory matters only where a table or lock file would be made in it.
        if exists(manifest.outputPath) && access(manifest.outputPath, W_OK) != 0 && tables.contains(where: { !exists($0) || !exists($0 + ".lock") }) {
            return "the output directory may not be written by this user (uid \(uid))"
        }
        let refused = tables.lazy.flatMap { [$0, $0 + ".lock"] }.first { exists($0) && access($0, W_OK) != 0 }
        return refused.map { path in
            var st = stat()
            let owner = stat(path, &st) == 0 ? "; the file is uid \(st.st_uid)'s, mode 0\(String(st.st_mode & 0o7777, radix: 8))" : ""
            return "\(manifest.displayOutput)/\((path as NSString).lastPathComponent) may not be written by this user (uid \(uid)\(owner))"
        }
    }

    /// Plans `manifest` as a dry run and returns that plan's summary as the bake's when it
    /// writes nothing.
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest whose output directory is on a read-only file system.
    ///   - options: the bake's options (not a dry run).
    /// - Returns: the summary of a bake that had nothing to write, with the warning
    ///   `output-read-only`.
    /// - Throws: ``ImageTableError`` `notWritable` when the bake would write (a source to
    ///   decode, an entry to evict or prune, a table to create, rebuild or delete), naming what;
    ///   what the dry run throws.
    static func bakeOnReadOnlyFileSystem(_ manifest: Manifest, because what: String, options: BakeOptions) throws(ImageTableError)
        -> BakeSummary {
        var planning = options
        planning.dryRun = true
        var summary = try bakeReportingStop(manifest, options: planning)
        summary.dryRun = false
        // `--strict` that met a known failure stops here as it would on a writable disk.
        if summary.stoppedBy != nil { return summary }
        let work = writes(of: summary, manifest: manifest)
        guard work.isEmpty else {
            throw ImageTableError(.notWritable, "\(what), and this bake would write: "
                                  + work.joined(separator: ", ") + " (bake --dry-run lists them)", path: manifest.displayOutput)
        }
        summary.warnings.append(BakeWarning(path: manifest.displayOutput, message: "\(what); "
            + "every table is up to date, so nothing was written (the entries' times of use and the bake state were not refreshed)",
            code: "output-read-only"))
        return summary
    }

    /// What a dry run's summary would write, for people ("3 sources to decode"); empty when nothing.
    private static func writes(of summary: BakeSummary, manifest: Manifest) -> [String] {
        func count(_ n: Int, _ one: String, _ many: String) -> [String] { n == 0 ? [] : ["\(n) \(n == 1 ? one : many)"] }
        // A file that does not open as a table is one the bake would make (or refuse).
        let missing = manifest.formats.filter { (try? ImageTableReader(path: manifest.tablePath(of: $0))) == nil }
        return count(summary.decoded, "source to decode", "sources to decode")
            + count(summary.tables.reduce(0) { $0 + $1.evicted }, "entry to evict", "entries to evict")
            + count(summary.tables.reduce(0) { $0 + $1.pruned }, "entry to prune", "entries to prune")
            + count(missing.count, "table to create", "tables to create")
            + count(summary.tables.filter(\.reset).count, "table to rebuild", "tables to rebuild")
            + count(summary.prunedTables.count, "table to delete", "tables to delete")
    }
}

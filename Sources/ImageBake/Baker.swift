import Foundation
import ImageManifest
import ImageTableCore
import Synchronization

/// Runs a bake: finds each family's sources, skips those every table already holds unchanged,
/// and has worker processes decode the rest once per family into reserved slots, publishing
/// them in batches.
///
/// The parent process never decodes (it does not even start libvips), so a bake over unchanged
/// sources costs one fingerprint per file. Each worker drives libvips from one thread, so the
/// liborc race described in `docs/PIPELINE.md` cannot occur, and a decoder crash costs one
/// source, not the bake.
public enum Baker {
    /// Bakes `manifest`.
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - options: jobs, limits, strictness, dry run, worker command.
    /// - Returns: the summary; sources that failed are listed in it, not thrown.
    /// - Throws: ``ImageTableError`` when the bake cannot go on, with the code of what stopped it:
    ///   a table that cannot be opened or written (`locked`, `no-space`, `insecure-file`…), a
    ///   sources directory that is missing (`sources-unreadable`), workers that cannot start
    ///   (`worker-unavailable`), or under `--strict` the first failed source (`source-failed`).
    public static func bake(_ manifest: Manifest, options: BakeOptions) throws -> BakeSummary {
        let started = Date()
        if !options.dryRun {
            do {
                try FileManager.default.createDirectory(atPath: manifest.outputPath, withIntermediateDirectories: true)
            } catch {
                throw ImageTableError(.io, "cannot create the output directory: \(error.localizedDescription)", path: manifest.outputPath)
            }
        }
        var failures: [SourceFailure] = []
        var items: [BakeRun.Item] = []
        for (index, family) in manifest.families.enumerated() {
            let scanner = SourceScanner(root: family.sourcesPath, allowOutside: options.allowOutsidePaths) { family.selects($0) }
            let (sources, skipped) = try scanner.scan()
            items += sources.map { BakeRun.Item(family: index, source: $0) }
            failures += skipped.map { SourceFailure(family: family.name, error: $0) }
        }
        let tables = try manifest.formats.map { try BakeTable($0, of: manifest, options: options) }
        defer { tables.forEach { $0.close() } }
        let run = BakeRun(manifest: manifest, tables: tables, items: items, options: options, started: started)
        let outcome = run.execute()
        var summary = outcome.summary
        summary.sourcesFound = items.count + failures.count
        summary.failed = (failures + summary.failed).sorted { ($0.family, $0.key) < ($1.family, $1.key) }
        summary.dryRun = options.dryRun
        summary.tables = tables.map { t in
            let c = t.counts.withLock { $0 }
            var s = TableSummary(path: t.displayPath, format: t.format.name, scale: t.format.scale, capacity: t.format.capacity)
            s.written = c.written
            s.evicted = options.dryRun ? max(0, t.entryCount + c.plannedNew - t.format.capacity) : c.evicted
            s.entries = options.dryRun ? min(t.format.capacity, t.entryCount + c.plannedNew) : t.entryCount
            s.reset = t.notices.contains { $0.kind == .reset }
            s.notices = t.notices.map(\.message)
            return s
        }
        summary.seconds = Date().timeIntervalSince(started)
        if let fatal = outcome.fatal { throw fatal }
        if options.strict, let first = summary.failed.first {
            throw ImageTableError(.sourceFailed, "\(first.key): \(first.error.message) [\(first.error.code.rawValue)]; --strict stops the bake",
                                  path: first.path, key: first.key)
        }
        return summary
    }
}

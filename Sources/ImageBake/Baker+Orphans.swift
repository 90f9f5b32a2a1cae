import Foundation
import ImageManifest
import ImageTableCore

/// Tables in a bake's output directory that no format of its manifest names: warned of, and
/// deleted by `--prune`, but never another manifest's, nor one another process is writing.
extension Baker {
    /// Warns of each orphan table, or with `--prune` deletes it (a dry run lists it), into
    /// `summary`'s warnings and pruned tables.
    ///
    /// - Parameters:
    ///   - manifest: the manifest baked.
    ///   - state: the bake state, which records the manifest that baked each table last.
    ///   - options: `--prune` and `--dry-run`.
    ///   - summary: the bake's summary, added to.
    static func handleOrphans(_ manifest: Manifest, state: BakeState, options: BakeOptions, into summary: inout BakeSummary) {
        for orphan in orphanTables(manifest, state: state) {
            if orphan.unclaimedFamily != nil, Self.isBeingWritten(orphan.path) {
                // Another manifest's first bake, running beside this one, has not recorded it yet.
                summary.warnings.append(BakeWarning(path: orphan.display, message: "no format of the manifest names this table, and another "
                                                    + "process is writing it (another manifest's bake?); left alone", code: "orphan-table"))
            } else if let family = orphan.unclaimedFamily {
                // Made before bakes recorded their manifest, for a family this manifest lacks:
                // most likely another manifest's that shares the directory, so never deleted.
                let whose = family.isEmpty ? "the table has no family" : "the table's family, '\(family)', is none of the manifest's"
                summary.warnings.append(BakeWarning(path: orphan.display, message: "no format of the manifest names this table (\(whose)), "
                                                    + "and no bake recorded which manifest made it; --prune leaves it (delete it by hand "
                                                    + "if no manifest bakes it)", code: "orphan-table"))
            } else if options.prune && options.dryRun {
                // Listed as the bake would list it, so that a script reads a dry run's document
                // as the real one's (it was only a warning).
                summary.prunedTables.append(orphan.display)
            } else if options.prune {
                // Never under a writer: a runtime cache may keep formats of its own here.
                let lock: TableLock
                do {
                    lock = try TableLock(tablePath: orphan.path, timeout: 0)
                } catch where error.code == .locked {
                    summary.warnings.append(BakeWarning(path: orphan.display, message: "no format of the manifest names this table, but another "
                                                        + "process is writing it, so --prune leaves it", code: "orphan-table"))
                    continue
                } catch {
                    summary.warnings.append(Self.undeletable(orphan.display, error))
                    continue
                }
                defer { lock.release() }
                if unlink(orphan.path) == 0 {
                    unlink(orphan.path + ".lock")
                    summary.prunedTables.append(orphan.display)
                } else {
                    // An output directory this user may not write: it said nothing, exit 0.
                    summary.warnings.append(Self.undeletable(orphan.display, ImageTableError.system("delete", path: orphan.path)))
                }
            } else {
                summary.warnings.append(BakeWarning(path: orphan.display, message: "no format of the manifest names this table; "
                                                    + "bake --prune deletes it", code: "orphan-table"))
            }
        }
    }

    /// The warning for an orphan table `--prune` could not delete (its lock file cannot be made,
    /// or the file cannot be unlinked, in a directory this user may not write).
    private static func undeletable(_ display: String, _ error: ImageTableError) -> BakeWarning {
        BakeWarning(path: display, message: "no format of the manifest names this table, and --prune could not delete it: \(error.message)",
                    code: "orphan-table")
    }

    /// Whether another process holds `table`'s writer lock now.
    private static func isBeingWritten(_ table: String) -> Bool {
        do {
            try TableLock(tablePath: table, timeout: 0).release()
            return false
        } catch {
            return error.code == .locked
        }
    }

    /// Image tables in the output directory that no format of the manifest names (tables of
    /// removed or renamed formats), by path and as a person would type it, but those another
    /// manifest that still exists baked last (two manifests may share an output directory: each
    /// warned of the other's tables at every bake, and `--prune` deleted them).
    ///
    /// - Returns: each orphan, with the family of one that no bake recorded the manifest of and
    ///   whose family this manifest lacks (`unclaimedFamily`: made before bakes recorded it,
    ///   likely another manifest's, so warned of and never pruned).
    private static func orphanTables(_ manifest: Manifest, state: BakeState)
        -> [(path: String, display: String, unclaimedFamily: String?)] {
        let named = Set(manifest.formats.map(\.fileName))
        let families = Set(manifest.families.map(\.name))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: manifest.outputPath)) ?? []
        let identity = manifestIdentity(manifest)
        return names.filter { $0.hasSuffix(".imagetable") && !named.contains($0) }.sorted().compactMap { name in
            let owner = state.manifest(ofTable: name)
            if let owner, owner != identity, FileManager.default.fileExists(atPath: owner) { return nil }
            let path = manifest.outputPath + "/" + name
            // Only what is a table: a file that merely ends in .imagetable is none of ours.
            guard let reader = try? ImageTableReader(path: path) else { return nil }
            let family = reader.header.family
            let unclaimed = owner == nil && !families.contains(family) ? family : nil
            let first = manifest.formats[0]
            return (path, String(manifest.displayPath(of: first).dropLast(first.fileName.count)) + name, unclaimed)
        }
    }
}

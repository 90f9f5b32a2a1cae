import Foundation
import ImageManifest
import ImageTableCore

/// Two manifests may share an output directory (docs/BAKE.md), but not a table.
///
/// Table files are named after their formats, so two manifests with a format `thumb` each bake
/// `thumb.imagetable`. Each bake then rebuilt the table empty for its own family and decoded
/// every source again, or, with the same family name, pruned the other's entries, at every run
/// and with exit 0. The bake state records which manifest baked each table last; a bake refuses
/// a table another manifest baked last while that manifest still names it, unless both make it
/// the same way from the same files.
enum TableClaims {
    /// Throws `shared-table` for the first of `manifest`'s tables that another manifest, one
    /// that exists and still names the same table (or cannot be read to tell), baked last into
    /// this directory, with other parameters or from other files.
    ///
    /// Checked before any table is opened, since opening one for another format rebuilds it.
    /// A table whose file is gone is no one's: a bake makes it afresh.
    ///
    /// - Parameters:
    ///   - manifest: the manifest about to bake.
    ///   - identity: its real path, as the state records it.
    /// - Throws: ``ImageTableError`` `shared-table`, naming the table and the other manifest.
    static func check(_ manifest: Manifest, identity: String) throws(ImageTableError) {
        let owners = BakeState.tableManifests(directory: manifest.outputPath)
        guard !owners.isEmpty else { return }
        var others: [String: Manifest?] = [:]
        for format in manifest.formats {
            guard let owner = owners[format.fileName], owner != identity, FileManager.default.fileExists(atPath: owner),
                  FileManager.default.fileExists(atPath: manifest.tablePath(of: format)) else { continue }
            let other = others[owner] ?? Self.read(owner)
            others[owner] = other
            let how: String
            if let other {
                // Its record is in this directory's state, so it baked here, by its own output
                // or by --output: whether it still names the table is what matters, not where
                // its output now points.
                guard let theirs = other.formats.first(where: { $0.fileName == format.fileName }) else { continue }
                // The same table from the same files (a second clone, an older release's copy of
                // the manifest): neither bake rebuilds or prunes what the other made.
                if Self.sameBake(theirs, of: other, as: format, of: manifest) { continue }
                how = "\(owner) bakes this table too (format '\(theirs.id)' of its family '\(theirs.family)') and baked it last"
            } else {
                how = "\(owner) baked this table last, and it cannot be read to tell whether it still does"
            }
            throw ImageTableError(.sharedTable, how + "; two manifests cannot share a table, as each bake would rebuild or prune the "
                                  + "other's entries: rename the format '\(format.id)' in one of them, or give one its own output",
                                  path: manifest.displayPath(of: format))
        }
    }

    /// The other manifest, parsed without counting its sources, or `nil` when it has errors.
    private static func read(_ path: String) -> Manifest? {
        let options = ValidationOptions(allowOutsidePaths: true, countsSources: false)
        return ManifestValidator(options: options).validate(fileAt: path).manifest
    }

    /// Whether two formats make one table from one set of files: the same parameters (family
    /// included, so neither rebuilds it) and a family with the same sources directory and
    /// patterns (so neither prunes or evicts the other's entries).
    private static func sameBake(_ theirs: TableFormat, of other: Manifest, as ours: TableFormat, of manifest: Manifest) -> Bool {
        guard theirs.canonicalParameters == ours.canonicalParameters,
              let a = other.families.first(where: { $0.name == theirs.family }),
              let b = manifest.families.first(where: { $0.name == ours.family }) else { return false }
        return SourceScanner.resolvedPath(a.sourcesPath) == SourceScanner.resolvedPath(b.sourcesPath)
            && a.include.map(\.pattern) == b.include.map(\.pattern) && a.exclude.map(\.pattern) == b.exclude.map(\.pattern)
    }
}

import Foundation
import ImageManifest
import ImageTableCore

/// Two manifests may share an output directory (docs/BAKE.md), but not a table.
///
/// Table files are named after their formats, so two manifests with a format `thumb` each bake
/// `thumb.imagetable`. Each bake then rebuilt the table empty for its own family and decoded
/// every source again, or, with the same family name, pruned the other's entries, at every run
/// and with exit 0. The bake state records which manifest baked each table last; a bake refuses
/// a table another manifest baked last while that manifest still names it.
enum TableClaims {
    /// Throws `shared-table` for the first of `manifest`'s tables that another manifest, one
    /// that exists and still names the same table (or cannot be read to tell), baked last.
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
                guard let theirs = other.formats.first(where: { $0.fileName == format.fileName }),
                      Self.same(other.outputPath, manifest.outputPath) else { continue }
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

    /// Whether two paths name one directory.
    private static func same(_ a: String, _ b: String) -> Bool {
        (SourceScanner.realPath(a) ?? a) == (SourceScanner.realPath(b) ?? b)
    }
}

import Foundation
import ImageManifest
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file that says which shard an output directory holds, `.imagetable-shard`:
/// `{"version": 1, "shard": K, "count": N, "manifest": "…"}`, written by `bake --shard K/N`
/// before it touches a table, read by later bakes (so that two shards never share a directory,
/// nor a shard a full bake's) and by `imagetable merge` (so that a merge has every shard of one
/// manifest once).
public struct ShardMarker: Sendable, Equatable, Codable {
    /// The file's name in the output directory.
    public static let fileName = ".imagetable-shard"

    /// The layout version of the file: 1.
    public var version = 1
    /// The shard the directory holds.
    public let shard: Int
    /// How many shards the bake was split into.
    public let count: Int
    /// What the manifest that baked it makes of its sources (``splitIdentity(of:)``), so that a
    /// merge of shards of two manifests is refused though their formats are equal; `nil` in a
    /// marker written before it was recorded.
    public var manifest: String?

    /// The marker of `selection`.
    ///
    /// - Parameters:
    ///   - selection: the shard.
    ///   - manifest: the manifest's ``splitIdentity(of:)``, or `nil`.
    public init(_ selection: ShardSelection, manifest: String? = nil) {
        shard = selection.index
        count = selection.count
        self.manifest = manifest
    }

    /// The ``manifest`` of a shard whose bake from the manifest `identity` has begun and not
    /// yet run to the end: a merge refuses it.
    static func pending(_ identity: String) -> String { "pending-" + identity }

    /// Whether the shard's last bake, its first or one from a changed manifest, did not run to
    /// the end.
    public var isPending: Bool { manifest?.hasPrefix("pending-") ?? false }

    /// Records that a bake of `selection` from the manifest `identity` ran to the end: the
    /// marker names that manifest, where ``claim(_:for:manifest:write:)`` had made it pending.
    ///
    /// - Throws: ``ImageTableError`` when the marker cannot be read or written.
    static func settle(_ directory: String, for selection: ShardSelection, manifest identity: String) throws(ImageTableError) {
        guard let marker = try read(in: directory), marker.marks(selection), marker.manifest != identity else { return }
        try ShardMarker(selection, manifest: identity).write(in: directory)
    }

    /// Whether this marks `selection`'s shard, whatever manifest baked it.
    func marks(_ selection: ShardSelection) -> Bool { shard == selection.index && count == selection.count }

    /// A digest of what decides which sources a manifest's shards hold and how they are baked:
    /// each family's name, `sources` as written, patterns and `failOn`, and each format's name
    /// and parameters, in manifest order. Not the output (each shard has its own), nor the
    /// manifest's path or layout: shards baked on several machines from one manifest agree.
    ///
    /// - Parameter manifest: the manifest.
    /// - Returns: 64 hexadecimal digits (SHA-256).
    public static func splitIdentity(of manifest: Manifest) -> String {
        // Each field with its length in bytes before it, so that no text of one manifest's
        // fields spells another's.
        var hash = SHA256()
        func field(_ text: String) { hash.update(Array("\(text.utf8.count):".utf8) + Array(text.utf8)) }
        field("imagetable split 1")
        for family in manifest.families {
            for text in ["family", family.name, family.sources, family.failOn.rawValue] { field(text) }
            field("include \(family.include.count)")
            family.include.forEach { field($0.pattern) }
            field("exclude \(family.exclude.count)")
            family.exclude.forEach { field($0.pattern) }
            for format in family.formats { for text in ["format", format.fileName, format.canonicalParameters] { field(text) } }
        }
        return hash.finalize()
    }

    /// The marker in `directory`, `nil` when there is none.
    ///
    /// - Parameter directory: an output directory.
    /// - Throws: ``ImageTableError`` `corrupt` when the file is there but not a marker.
    public static func read(in directory: String) throws(ImageTableError) -> ShardMarker? {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let marker = try? JSONDecoder().decode(ShardMarker.self, from: data), marker.version == 1,
              (try? ShardSelection(index: marker.shard, count: marker.count)) != nil else {
            throw ImageTableError(.corrupt, "not a shard marker (\(fileName))", path: path)
        }
        return marker
    }

    /// Writes the marker into `directory`, whole or not at all (a temporary file renamed).
    ///
    /// - Parameters:
    ///   - directory: the output directory.
    ///   - exclusive: only if there is no marker yet (a temporary file hard-linked, which fails
    ///     when the name exists): two bakes that each found none cannot both claim the directory.
    /// - Returns: whether it was written: `false` when `exclusive` and a marker was there.
    /// - Throws: ``ImageTableError`` `io` when it cannot be written.
    @discardableResult
    public func write(in directory: String, exclusive: Bool = false) throws(ImageTableError) -> Bool {
        let path = directory + "/" + Self.fileName
        let temp = path + ".tmp-\(getpid())"
        let text = "{\"version\": 1, \"shard\": \(shard), \"count\": \(count)" + (manifest.map { ", \"manifest\": \"\($0)\"" } ?? "") + "}\n"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temp))
        } catch {
            throw ImageTableError(.io, "cannot write the shard marker: \(error.localizedDescription)", path: temp)
        }
        defer { unlink(temp) }
        if exclusive {
            if link(temp, path) == 0 { return true }
            if errno == EEXIST { return false }
            // A file system without hard links: the rename below, as before.
            guard errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP else { throw ImageTableError.system("link", path: path) }
        }
        guard rename(temp, path) == 0 else { throw ImageTableError.system("rename", path: path) }
        return true
    }

    /// Checks that a bake of `selection` (`nil`: every source) may write into `directory`, and
    /// marks it for a shard: a directory holds one shard's tables, or a whole bake's, never a mix.
    ///
    /// - Parameters:
    ///   - directory: the output directory, which exists.
    ///   - selection: the bake's shard, or `nil`.
    ///   - manifest: the bake's manifest's ``splitIdentity(of:)``, recorded in the marker (again,
    ///     when the manifest has changed since the shard's last bake, or the marker predates it).
    ///   - write: whether to write the marker (not in a dry run).
    /// - Throws: ``ImageTableError`` `shard-mismatch` naming what the directory holds.
    static func claim(_ directory: String, for selection: ShardSelection?, manifest: String? = nil, write: Bool) throws(ImageTableError) {
        let existing = try read(in: directory)
        switch (existing, selection) {
        case (nil, nil):
            return
        case let (marker?, nil):
            throw ImageTableError(.shardMismatch, "the output directory holds shard \(marker.shard)/\(marker.count) of a sharded bake; "
                                  + "bake it with --shard \(marker.shard)/\(marker.count), or give the whole bake another --output", path: directory)
        case let (marker?, selection?):
            guard marker.marks(selection) else {
                throw ImageTableError(.shardMismatch, "the output directory holds shard \(marker.shard)/\(marker.count), not \(selection); "
                                      + "give each shard its own --output", path: directory)
            }
            // Pending until the bake has run to the end (``settle(_:for:manifest:)``): a bake that
            // failed after this left the old manifest's tables under the new one's name, and a
            // merge took them for one split with the other shards.
            if write, let manifest, marker.manifest != manifest, marker.manifest != Self.pending(manifest) {
                try ShardMarker(selection, manifest: Self.pending(manifest)).write(in: directory)
            }
        case let (nil, selection?):
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard !names.contains(where: { $0.hasSuffix(".imagetable") }) else {
                throw ImageTableError(.shardMismatch, "the output directory holds the tables of an unsharded bake; "
                                      + "give shard \(selection) a directory of its own (--output)", path: directory)
            }
            // Exclusive: a shard that found no marker a moment ago may have lost the directory to
            // another since (two jobs given one --output); then the other's marker decides.
            // Pending too, until this first bake runs to the end: one stopped part-way (a kill,
            // --strict, a full disk) left a final marker over a part of the shard, which a merge
            // took with the others, its missing entries unsaid.
            if write, try !ShardMarker(selection, manifest: manifest.map(Self.pending)).write(in: directory, exclusive: true) {
                try claim(directory, for: selection, manifest: manifest, write: write)
            }
        }
    }
}

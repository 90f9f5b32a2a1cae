import Foundation
import ImageTableCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file that says which shard an output directory holds, `.imagetable-shard`:
/// `{"version": 1, "shard": K, "count": N}`, written by `bake --shard K/N` before it touches a
/// table, read by later bakes (so that two shards never share a directory, nor a shard a full
/// bake's) and by `imagetable merge` (so that a merge has every shard once).
public struct ShardMarker: Sendable, Equatable, Codable {
    /// The file's name in the output directory.
    public static let fileName = ".imagetable-shard"

    /// The layout version of the file: 1.
    public var version = 1
    /// The shard the directory holds.
    public let shard: Int
    /// How many shards the bake was split into.
    public let count: Int

    /// The marker of `selection`.
    ///
    /// - Parameter selection: the shard.
    public init(_ selection: ShardSelection) {
        shard = selection.index
        count = selection.count
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
        let text = "{\"version\": 1, \"shard\": \(shard), \"count\": \(count)}\n"
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
    ///   - selection: the bake's shard, or `nil`.
    ///   - directory: the output directory, which exists.
    ///   - write: whether to write the marker (not in a dry run).
    /// - Throws: ``ImageTableError`` `shard-mismatch` naming what the directory holds.
    static func claim(_ directory: String, for selection: ShardSelection?, write: Bool) throws(ImageTableError) {
        let existing = try read(in: directory)
        switch (existing, selection) {
        case (nil, nil):
            return
        case let (marker?, nil):
            throw ImageTableError(.shardMismatch, "the output directory holds shard \(marker.shard)/\(marker.count) of a sharded bake; "
                                  + "bake it with --shard \(marker.shard)/\(marker.count), or give the whole bake another --output", path: directory)
        case let (marker?, selection?):
            guard marker == ShardMarker(selection) else {
                throw ImageTableError(.shardMismatch, "the output directory holds shard \(marker.shard)/\(marker.count), not \(selection); "
                                      + "give each shard its own --output", path: directory)
            }
        case let (nil, selection?):
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard !names.contains(where: { $0.hasSuffix(".imagetable") }) else {
                throw ImageTableError(.shardMismatch, "the output directory holds the tables of an unsharded bake; "
                                      + "give shard \(selection) a directory of its own (--output)", path: directory)
            }
            // Exclusive: a shard that found no marker a moment ago may have lost the directory to
            // another since (two jobs given one --output); then the other's marker decides.
            if write, try !ShardMarker(selection).write(in: directory, exclusive: true) {
                try claim(directory, for: selection, write: write)
            }
        }
    }
}

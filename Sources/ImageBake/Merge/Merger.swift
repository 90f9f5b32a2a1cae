import Foundation
import ImageTableCore

/// What `imagetable merge` did to one table.
public struct MergedTable: Sendable, Codable, Equatable {
    /// The table file in the output directory, as a person would type it.
    public let path: String
    /// The format's name.
    public let format: String
    /// The table's scale.
    public let scale: Int
    /// Entries in the merged table.
    public let entries: Int
    /// The table's capacity (`maximumCount`).
    public let capacity: Int
    /// Entries that did not fit the capacity: the least recently modified sources' (the plan's rule).
    public let leftOut: Int
    /// Keys more than one input held; the entry of the most recently modified source was kept.
    public let duplicates: Int
    /// Entries left out because their pixels failed their checksum or changed while copied.
    public let skipped: Int
}

/// What a merge did.
public struct MergeSummary: Sendable {
    /// Per table, by file name.
    public var tables: [MergedTable] = []
    /// The inputs' shard count, when they are shards.
    public var shards: Int?
    /// Bytes of pixels copied.
    public var bytes = 0
    /// Wall-clock seconds.
    public var seconds = 0.0
    /// Entries left out: their pixels failed their checksum, they changed while copied, or their
    /// records were damaged. Each names the input table, and the slot and key in its message.
    public var warnings: [BakeWarning] = []
}

/// `imagetable merge OUT DIR...`: combines the tables of several output directories (the
/// shards of a sharded bake) into one set, copying slots and never decoding (`docs/SCALE.md`).
public enum Merger {
    /// Merges the tables of `inputs` into `output`.
    ///
    /// Every input must hold the same tables, made with the same parameters (`manifest-mismatch`
    /// otherwise), and shards must be every shard of one split once (`shard-mismatch`). The
    /// result depends on the inputs' contents alone, not on their order: byte for byte the same
    /// tables whichever order they are given in. The output is replaced whole, atomically
    /// (``MergeOutput``); killed at any instant, it is the old set or the new one.
    ///
    /// - Parameters:
    ///   - inputs: the directories to merge.
    ///   - output: the directory to write; new, empty, or the output of an earlier merge.
    ///   - lockTimeout: seconds to wait for writers of the old output's tables.
    ///   - stopRequested: asked between tables and every 256 entries (64 MiB) until the new set is put in
    ///     place: an error to stop with (an interrupt), the staging directory deleted and the
    ///     output unchanged, or `nil` to go on.
    /// - Returns: what was merged.
    /// - Throws: ``ImageTableError`` when the merge cannot be made; the output is then unchanged.
    public static func merge(_ inputs: [String], into output: String, lockTimeout: Double = 10,
                             stopRequested: @escaping () -> ImageTableError? = { nil }) throws(ImageTableError) -> MergeSummary {
        let started = Date()
        let sources = try MergeInputs(inputs, output: output, lockTimeout: lockTimeout)
        defer { sources.release() }
        let target = try MergeOutput(output, writing: Set(sources.tableNames))
        var summary = MergeSummary()
        summary.shards = sources.inputs.first?.marker?.count
        do throws(ImageTableError) {
            for name in sources.tableNames {
                if let stop = stopRequested() { throw stop }
                let readers = sources.inputs.map { $0.tables[name]! }
                let outcome = try TableMerge(name: name, readers: readers, stopRequested: stopRequested).build(at: target.staged(name))
                let header = readers[0].header
                summary.tables.append(MergedTable(path: output + "/" + name, format: header.name, scale: header.scale, entries: outcome.entries,
                                                  capacity: header.layout.capacity, leftOut: outcome.leftOut, duplicates: outcome.duplicates,
                                                  skipped: outcome.skipped.count))
                summary.bytes += outcome.bytes
                summary.warnings += outcome.skipped
            }
            try target.commit(marker: MergeOutput.marker(inputs: inputs.count, shards: summary.shards, tables: sources.tableNames),
                              lockTimeout: lockTimeout, stopRequested: stopRequested)
        } catch {
            target.discard()
            throw error.relocated(from: target.staging, to: output)
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }
}

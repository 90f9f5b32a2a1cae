import Foundation
import ImageTableCore

/// One source that was not baked, and why.
///
/// JSON (`bake --format json`): `family`, `key`, `path`, `code`, `message` and, when the decoder
/// said something, `cause`.
public struct SourceFailure: Sendable, Hashable, Encodable {
    /// The family it belongs to.
    public let family: String
    /// Why: its code (`truncated`, `too-many-pixels`, `worker-crashed`, `key-too-long`…), a
    /// sentence, the source's path and key, and the decoder's own words.
    public let error: ImageTableError

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - family: the family the source belongs to.
    ///   - error: why it failed; it names the source's path and key.
    public init(family: String, error: ImageTableError) {
        self.family = family
        self.error = error
    }

    /// The source's key (its path relative to the family's sources directory).
    public var key: String { error.key ?? "" }

    /// Whether the bake skips the file with a warning rather than failing it: it is not an
    /// image, changed while it was read, is a FIFO, device or socket, is a hidden image, or an
    /// image whose extension the patterns take spelt otherwise (`IMG.JPG` for `**/*.jpg`).
    public var isSkip: Bool { Self.skipCodes.contains(error.code.rawValue) }

    /// The codes of ``isSkip``.
    static let skipCodes: Set<String> = Set([ImageTableError.Code.notAnImage, .changedWhileReading, .notARegularFile, .hiddenFile,
                                             .extensionSpelling].map(\.rawValue))
    /// The source's path.
    public var path: String { error.path ?? "" }

    private enum CodingKeys: String, CodingKey { case family, key, path, code, message, cause }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(family, forKey: .family)
        try c.encode(key, forKey: .key)
        try c.encode(path, forKey: .path)
        try c.encode(error.code.rawValue, forKey: .code)
        try c.encode(error.message, forKey: .message)
        try c.encodeIfPresent(error.cause, forKey: .cause)
    }
}

/// What happened to one table.
public struct TableSummary: Sendable, Codable, Equatable {
    /// The table file, as a person would type it.
    public let path: String
    /// The format's name and the table's scale.
    public let format: String
    public let scale: Int
    /// Entries written (new or replaced) by this bake.
    public var written = 0
    /// Entries replaced to make room (the table was full).
    public var evicted = 0
    /// Entries deleted because their source is gone (`--prune`).
    public var pruned = 0
    /// Present sources that get no slot: the family has more sources than `maximumCount`.
    public var leftOut = 0
    /// Entries in the table after the bake, and its capacity.
    public var entries = 0
    public let capacity: Int
    /// Whether opening rebuilt the table (its parameters changed or it was damaged).
    public var reset = false
    /// What opening reported (rebuilds with the options that changed, interrupted writes dropped…).
    public var notices: [String] = []
    /// ``notices`` with those that say the same of several slots together, for a report that
    /// says them once (after a kill, one per slot that was being written: hundreds). Not in
    /// the JSON summary, which lists every notice.
    public var noticeGroups: [NoticeGroup] = []

    private enum CodingKeys: String, CodingKey {
        case path, format, scale, written, evicted, pruned, leftOut, entries, capacity, reset, notices
    }
}

/// Notices that say the same thing of several slots (or one notice of none).
public struct NoticeGroup: Sendable, Equatable {
    /// What they say, without the slot: `interrupted write; dropped it`.
    public let what: String
    /// The slots, in the order reported; empty for a notice about the whole table.
    public var slots: [Int]
    /// Their kind's code (`discarded-interrupted-write`, `tightened-permissions`…), which the
    /// note ends with, as errors and warnings end with theirs.
    public var code = ""

    /// Groups `notices` by what they say of their slot, in order of first appearance. A slot's
    /// notice reads `slot N: what` (the core's wording); the slot is taken from the notice,
    /// not read back out of its text.
    ///
    /// - Parameter notices: a table's notices.
    /// - Returns: one group per distinct sentence about slots, and one per other notice.
    public static func grouping(_ notices: [TableNotice]) -> [NoticeGroup] {
        var groups: [NoticeGroup] = []
        for notice in notices {
            let prefix = notice.slot.map { "slot \($0): " }
            let code = notice.kind.rawValue
            guard let slot = notice.slot, let prefix, notice.message.hasPrefix(prefix) else {
                groups.append(NoticeGroup(what: notice.message, slots: [], code: code))
                continue
            }
            let what = String(notice.message.dropFirst(prefix.count))
            if let index = groups.firstIndex(where: { $0.what == what && $0.code == code && !$0.slots.isEmpty }) {
                groups[index].slots.append(slot)
            } else {
                groups.append(NoticeGroup(what: what, slots: [slot], code: code))
            }
        }
        return groups
    }
}

/// Everything a bake did: what `imagetable bake` prints and `--format json` emits.
public struct BakeSummary: Sendable {
    /// Source files found across all families.
    public var sourcesFound = 0
    /// Sources decoded (once per family each).
    public var decoded = 0
    /// Sources skipped because every table already held them, unchanged.
    public var unchanged = 0
    /// Sources that get no slot in any table (the family has more sources than slots): reported,
    /// not failed. The rule that chooses is `docs/BAKE.md`'s.
    public var leftOut = 0
    /// Entries whose source is gone (deleted with `--prune`, else kept until their slot is needed).
    public var removed = 0
    /// Of ``removed``, the sources no table held an entry of (new files deleted during the
    /// bake): nothing of theirs stays, with `--prune` or without.
    public var removedWithoutEntries = 0
    /// Sources modified too recently to bake (`--min-age`), left for a later bake.
    public var deferred = 0
    /// Sources the plan would decode that were never sent to a worker, since the bake stopped
    /// first (`--strict`, a fatal error, an interrupt): neither decoded nor failed.
    public var notAttempted = 0
    /// Whether `--strict` stopped the bake before it sent any source, on failures known before
    /// decoding (an empty file, a decode that failed at an earlier bake): ``failed`` lists every
    /// one it knew of, which a user fixes at once, rather than one a run.
    public var stoppedBeforeDecoding = false
    /// Sources that could not be baked.
    public var failed: [SourceFailure] = []
    /// Of ``failed``, those whose key still has its previous entry, kept (retried next run).
    public var keptPrevious = 0
    /// Files skipped with a warning, not failed: not images, changed while they were read.
    public var skipped: [SourceFailure] = []
    /// Warnings for people: over-full tables, decoder warnings, tables no format names, a bake
    /// state replaced or read only.
    public var warnings: [BakeWarning] = []
    /// Tables no format of the manifest names, deleted by `--prune`, as a person would type them.
    public var prunedTables: [String] = []
    /// Per table.
    public var tables: [TableSummary] = []
    /// Wall-clock seconds.
    public var seconds = 0.0
    /// Wall-clock seconds of each phase (zero for phases a dry run or a failed bake did not reach).
    public var phases = BakePhases()
    /// CPU seconds of the bake's process and of its workers.
    public var cpu = BakeCPU()
    /// Whether this was a `--dry-run` (nothing was written; counts are what would happen).
    public var dryRun = false
    /// Whether the bake ran with `--prune`: without it, the entries of removed sources stay.
    public var pruning = false
    /// Whether the bake stopped before its end: `--strict` at the first failure, or an error
    /// of the bake's own during the run (``stoppedBy``).
    public var stoppedEarly = false
    /// What stopped the bake once it had begun writing: with `--strict` and a failed source,
    /// `source-failed`; else the run's fatal error (a full disk, a table's I/O error, a bake
    /// state that could not be committed). ``Baker/bake(_:options:)`` throws it;
    /// ``Baker/bakeReportingStop(_:options:)`` returns it here, with the counts of what was
    /// written before.
    public var stoppedBy: ImageTableError?
    /// The plan the bake followed (what a dry run prints).
    public var plan: BakePlan?
    /// The shard baked (`--shard`), or `nil` for every source.
    public var shard: ShardSelection?
}

/// What a running bake is doing, for a progress display.
public enum BakeStage: Sendable, Equatable {
    /// Listing the families' sources: ``BakeProgress/done`` counts the sources found so far,
    /// and ``BakeProgress/total`` is 0 (unknown).
    case listing
    /// Reading the sources that are new or changed since the last bake (fingerprinting them, or
    /// peeking at them): ``BakeProgress/done`` of ``BakeProgress/total`` of those.
    case checking
    /// Decoding and rendering: ``BakeProgress/done`` of ``BakeProgress/total`` sources to decode.
    case rendering
}

/// Progress of a running bake, for a progress bar.
///
/// A bake reports its ``BakeStage/listing`` and ``BakeStage/checking`` stages only once one has
/// lasted half a second (a first bake of 300,000 sources spent 21 s in them, silent), and its
/// ``BakeStage/rendering`` stage always.
public struct BakeProgress: Sendable {
    /// What the bake is doing; ``done`` and ``total`` count that stage's work.
    public let stage: BakeStage
    /// Sources finished (baked, unchanged or failed), or those the stage has done.
    public let done: Int
    /// Sources to do in the stage (0 while listing: not known yet).
    public let total: Int
    /// Sources that failed so far.
    public let failed: Int
    /// Seconds since the bake started.
    public let elapsed: Double
    /// Seconds since the stage began (rendering: since the first source was sent to a worker):
    /// what a rate is measured over. Over the whole bake, the listing and the checking made the
    /// rate of a bake of 300,000 touched sources a fifth of the real one, and its time left an
    /// hour too long.
    public let inStage: Double

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - stage: what the bake is doing.
    ///   - done: what the stage has done.
    ///   - total: what the stage has to do, or 0 when not known.
    ///   - failed: sources that failed so far.
    ///   - elapsed: seconds since the bake started.
    ///   - inStage: seconds since the stage began.
    public init(stage: BakeStage = .rendering, done: Int, total: Int, failed: Int, elapsed: Double, inStage: Double) {
        self.stage = stage
        self.done = done
        self.total = total
        self.failed = failed
        self.elapsed = elapsed
        self.inStage = inStage
    }
}

/// A warning of a bake, kept in its parts, so that each output shapes it as it shapes the rest:
/// a line for people (``description``), or a GitHub annotation on its file, titled with its code.
public struct BakeWarning: Sendable, Hashable, CustomStringConvertible, Encodable {
    /// The file it concerns, as the summary names it: a table, the bake state, a source.
    public let path: String
    /// What is wrong, for people.
    public let message: String
    /// The stable code (`orphan-table`, `more-sources-than-slots`, `state-reset`…), or `nil`
    /// for a decoder's own warning, which has none of ours.
    public let code: String?
    /// Where in `path` it lies (line, then column, from 1), for a warning about the manifest.
    public let line: Int?, column: Int?

    /// Creates a warning.
    ///
    /// - Parameters:
    ///   - path: the file it concerns.
    ///   - message: what is wrong.
    ///   - code: its stable code, or `nil` for a decoder's warning.
    ///   - line: the line it concerns in `path`, if any.
    ///   - column: the column it concerns on that line.
    public init(path: String, message: String, code: String?, line: Int? = nil, column: Int? = nil) {
        self.path = path
        self.message = message
        self.code = code
        self.line = line
        self.column = column
    }

    private enum CodingKeys: String, CodingKey { case path, line, column, code, message }

    /// `{"path", "line", "column", "code", "message"}` in a bake's JSON document, without the
    /// position and the code where there are none, so that a script selects warnings by code
    /// as it selects failures.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        try c.encodeIfPresent(line, forKey: .line)
        try c.encodeIfPresent(column, forKey: .column)
        try c.encodeIfPresent(code, forKey: .code)
        try c.encode(message, forKey: .message)
    }

    /// `PATH[:LINE:COLUMN]: warning: MESSAGE [CODE]`, as every compiler-style line is.
    public var description: String {
        let at = line.map { ":\($0)" + (column.map { ":\($0)" } ?? "") } ?? ""
        return "\(path)\(at): warning: \(message)" + (code.map { " [\($0)]" } ?? "")
    }
}

import Foundation
import ImageManifest
import ImageTableCore

/// What a bake will do, computed before any table is touched: per source, whether it is decoded;
/// per table, what is written, evicted, pruned and left out. `--dry-run` prints it; the bake then
/// does exactly this, but for sources that fail to decode (they keep their entries and evict
/// nothing). The rules are `docs/BAKE.md`'s, "The plan".
public struct BakePlan: Sendable {
    /// How a source compares with what its family's tables hold.
    public enum SourceStatus: String, Sendable, Codable, CaseIterable {
        /// No table of its family holds its key.
        case new
        /// A table holds its key, made from other bytes.
        case changed
        /// Every table that holds its key holds it from these bytes.
        case unchanged
        /// A table holds the key, but the source is gone.
        case removed
        /// In a listing only (``BakePlan/listing(skipping:)``): a file the bake skips with a
        /// warning, never planned (not an image, hidden, not a regular file).
        case skipped
        /// Modified too recently to bake (`--min-age`): left, as it is, to a later bake.
        case deferred
        /// No table of its family gives it a slot (more sources than slots, and others more
        /// recently modified): not written, and its entry, if a table holds one, may be evicted.
        case leftOut = "left-out"
        /// In a listing only (``BakePlan/listing(skipping:failing:)``): a file the scan found
        /// that cannot be a source (a link that leads outside the sources, a name that is not
        /// UTF-8, a key too long), never planned; ``Listed/failure`` says why.
        case failed
    }

    /// A source to decode, once, for the tables of its family that lack it.
    ///
    /// A position in its family's sources (``PlannedFamily``, which every job of the family
    /// shares) rather than a copy of the file: a plan holds a job per source to decode, 16 bytes
    /// each, where a copy of the file's key, directory and stat was 96.
    public struct Job: Sendable {
        let planned: PlannedFamily
        /// The source's position in ``PlannedFamily/files``.
        let position: UInt32
        /// Which of ``PlannedFamily/tableLists`` the job writes; the top bit: changed, not new.
        private let listAndStatus: UInt32

        init(_ planned: PlannedFamily, position: Int, list: Int, status: SourceStatus) {
            precondition(list < 1 << 31 && position <= Int(UInt32.max), "a job's list and position fit 32 bits")
            (self.planned, self.position) = (planned, UInt32(position))
            listAndStatus = UInt32(list) | (status == .new ? 0 : 1 << 31)
        }

        /// The same job, its source at `position` in `family` (``PlannedFamily/compacted(jobs:)``).
        func moved(to family: PlannedFamily, position: Int) -> Job {
            Job(family, position: position, list: list, status: status)
        }

        private var list: Int { Int(listAndStatus & ~(1 << 31)) }

        /// The family's position in the manifest (and in ``BakePlan/families``).
        public var family: Int { planned.index }
        /// The source.
        public var source: SourceFile { planned.files[Int(position)] }
        /// The tables to write, as indices of ``BakePlan/tables``, ascending.
        public var tables: [Int] { planned.tableLists[list] }
        /// New or changed: changed when some table of the family holds the key, from other bytes.
        public var status: SourceStatus { listAndStatus >> 31 == 0 ? .new : .changed }
    }

    /// One table's part of the plan.
    public struct TableChange: Sendable, Equatable {
        /// Keys written: new ones, and changed ones that replace their own entry; sorted.
        public var writes: [String] = []
        /// How many of ``writes`` replace an entry of the same key.
        public var replaced = 0
        /// Entries replaced to make room, in the order they are taken.
        public var evictions: [String] = []
        /// Entries deleted because their source is gone (`--prune`).
        public var prunes: [String] = []
        /// Present sources that get no slot: the table is smaller than the family.
        public var leftOut: [String] = []
        /// Entries whose source is gone, kept (no `--prune`, no need for their slot).
        public var gone: [String] = []
        /// `--prune` deleted none of ``gone``, since the family listed no source at all: an
        /// unmounted or emptied sources directory would have emptied the table.
        public var pruneWithheld = false
        /// Entries before and after, and the capacity.
        public var entriesBefore = 0, entriesAfter = 0, capacity = 0
        /// Present sources competing for slots (for the over-full warning).
        public var candidates = 0
    }

    /// One source as `bake --list` prints it.
    public struct Listed: Sendable, Equatable, Codable {
        /// The family's name.
        public let family: String
        /// The source's key.
        public let key: String
        /// How it compares with the tables.
        public let status: SourceStatus
        /// The code of a failure known before decoding (an unreadable or empty file, a decode
        /// that failed at an earlier bake and has not changed since), which the bake reports
        /// without decoding the source; `nil` for the others.
        public var failure: String? = nil
        /// Why a ``SourceStatus/skipped`` file is skipped (`not-an-image`, `hidden-file`,
        /// `not-a-regular-file`, `changed-while-reading`); `nil` for the others.
        public var skipped: String? = nil
    }

    /// The sources to decode.
    public var jobs: [Job] = []
    /// The families' names, in manifest order: a job names its family by position, since a plan
    /// holds a job per source to decode.
    public var families: [String] = []
    /// Per table, in the order of the manifest's formats.
    public var tables: [TableChange] = []
    /// Sources whose every table already holds them, or that get no slot anywhere.
    public var unchanged = 0
    /// Sources every table leaves out (more sources than slots): counted, not failed.
    public var leftOut = 0
    /// Sources modified too recently to bake (`--min-age`): left for a later bake.
    public var deferred = 0
    /// Sources that fail before decoding (unreadable, empty, too large, outside `sources`…).
    public var failures: [SourceFailure] = []
    /// Files skipped with a warning: not images, changed while they were read.
    public var skipped: [SourceFailure] = []
    /// Per family, in manifest order: its sources and removed keys with their statuses.
    var planned: [PlannedFamily] = []
    /// The families whose directories hold sources that other shards bake (a shard's bake).
    var sourcedByOtherShards: Set<String> = []

    /// Every source and removed key with its status, sorted by family and key (made when asked
    /// for: `bake --list` prints it; the bake itself asks ``status(family:key:)``).
    public var listing: [Listed] { listing(skipping: [], failing: []) }

    /// Every source and removed key with its status, and every file the bake skips with a
    /// warning as ``SourceStatus/skipped``, sorted by family and key.
    ///
    /// - Parameters:
    ///   - scanSkips: the files the scans skipped before planning (hidden images, FIFOs, devices
    ///     and sockets: ``BakeSummary/skipped``); a file the plan lists too (one that is not an
    ///     image by its first bytes, a baked key whose file is now a FIFO) is listed once.
    ///   - scanFailures: the sources that failed (``BakeSummary/failed``): those the plan does not
    ///     list (a link that leads outside the sources, a name that is not UTF-8) are listed as
    ///     ``SourceStatus/failed``, where `--list --format json` left them out.
    /// - Returns: the listing `bake --list` prints.
    public func listing(skipping scanSkips: [SourceFailure], failing scanFailures: [SourceFailure] = []) -> [Listed] {
        // By the keys' bytes: Swift's strings are equal when canonically equivalent, and two
        // files named so (`ambiguous-name`: one kept, one failed) are two lines. A name that is
        // not UTF-8 is no key: its failure shows it with `\xFF` for the bytes outside UTF-8,
        // which a file may be named literally, so it is a line of its own whatever it reads.
        struct Name: Hashable { let family: String, key: [UInt8], notUTF8: Bool }
        func name(_ family: String, _ key: String, _ code: ImageTableError.Code? = nil) -> Name {
            Name(family: family, key: Array(key.utf8), notUTF8: code == .nameNotUTF8)
        }
        func name(_ failure: SourceFailure) -> Name { name(failure.family, failure.key, failure.error.code) }
        var failed: [Name: String] = [:]
        for failure in failures { failed[name(failure)] = failure.error.code.rawValue }
        var listed = planned.sorted { $0.name < $1.name }.flatMap { family in
            family.listing().map { item in
                var item = item
                guard let code = failed[name(item.family, item.key)] else { return item }
                if SourceFailure.skipCodes.contains(code) {
                    item = Listed(family: item.family, key: item.key, status: .skipped, skipped: code)
                } else {
                    item.failure = code
                }
                return item
            }
        }
        var at: [Name: Int] = [:]
        for (i, item) in listed.enumerated() { at[name(item.family, item.key)] = i }
        var unplanned: [SourceFailure] = []
        for failure in scanFailures where !failure.key.isEmpty && at[name(failure)] == nil {
            at[name(failure)] = -1  // listed once
            unplanned.append(failure)
        }
        for skip in scanSkips {
            // A key the plan lists too (a baked file replaced by a FIFO: its entry's source is
            // gone) is one line, its status and why its file is skipped.
            if let i = at[name(skip)] {
                if i >= 0 && listed[i].status != .skipped { listed[i].skipped = skip.error.code.rawValue }
            } else {
                unplanned.append(skip)
            }
        }
        guard !unplanned.isEmpty else { return listed }
        listed += unplanned.map { item in
            item.isSkip ? Listed(family: item.family, key: item.key, status: .skipped, skipped: item.error.code.rawValue)
                : Listed(family: item.family, key: item.key, status: .failed, failure: item.error.code.rawValue)
        }
        // Stable: the plan's own order within a family stays, the skipped and failed files fall in by key.
        return listed.enumerated().sorted { a, b in
            (a.element.family, a.element.key) != (b.element.family, b.element.key)
                ? (a.element.family, a.element.key) < (b.element.family, b.element.key) : a.offset < b.offset
        }.map(\.element)
    }

    /// How a family's key compares with its tables, or `nil` when the plan does not list it.
    ///
    /// - Parameters:
    ///   - family: the family's name.
    ///   - key: the source's key.
    /// - Returns: the key's status, ``SourceStatus/removed`` for a key only a table holds.
    public func status(family: String, key: String) -> SourceStatus? {
        planned.first { $0.name == family }?.status(of: key)
    }

    /// Sources the scans found and planned for, in every family (failed and deferred included).
    public var sourceCount: Int { planned.reduce(0) { $0 + $1.count } }

    /// Lets each family with few sources to decode keep only their files for the run, rather
    /// than the scan's record of every source (``PlannedFamily/compacted(jobs:)``). Called once
    /// the scan's lists have no other holder, so that theirs are freed.
    mutating func compact() {
        var compacted: [Job] = []
        compacted.reserveCapacity(jobs.count)
        var start = 0
        for (f, family) in planned.enumerated() {
            // The planner appends each family's jobs together, in manifest order.
            var end = start
            while end < jobs.count && jobs[end].planned === family { end += 1 }
            let (kept, theirs) = family.compacted(jobs: jobs[start..<end])
            planned[f] = kept
            compacted += theirs
            start = end
        }
        jobs = compacted
    }

    /// Keys the tables hold whose sources are gone, in every family.
    public var removedCount: Int { planned.reduce(0) { $0 + $1.removed.count } }
}

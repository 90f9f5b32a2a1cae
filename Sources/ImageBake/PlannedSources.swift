import Foundation
import ImageManifest

extension BakePlanner {
    /// A family's sources after the diff, as the planner reads them: the scan's own list of
    /// files, a fingerprint beside each, and the rare failures and deferrals apart.
    ///
    /// Not a value per source: a bake of a million sources would otherwise hold a second copy of
    /// every scanned file (its key, directory and stat) next to the scan's, while the diff builds
    /// it and for the whole plan. The list of files is the scan's array itself, shared, so what
    /// this adds per source is its fingerprint (17 bytes) and, with `--min-age`, a flag.
    struct Sources {
        /// The files, in scan order (sorted by key).
        let files: [SourceFile]
        private let fingerprints: [UUID?]
        private let failures: [Int: Failure]
        /// Empty until a source is deferred: most bakes defer none.
        private var deferrals: [Bool] = []

        /// The sources `files`, with what the diff learnt of each.
        ///
        /// - Parameters:
        ///   - files: the files, in scan order.
        ///   - fingerprints: each file's fingerprint, when known (trusted from the state, or read).
        ///   - failures: why some of them cannot be baked, found before decoding, by position.
        init(files: [SourceFile], fingerprints: [UUID?], failures: [Int: Failure]) {
            precondition(files.count == fingerprints.count, "a fingerprint (or nil) per file")
            (self.files, self.fingerprints, self.failures) = (files, fingerprints, failures)
        }

        /// How many sources there are.
        var count: Int { files.count }

        /// Their positions.
        var indices: Range<Int> { files.indices }

        /// The fingerprint of source `i`, when known; always known for a key some table of the
        /// family holds, unless the source failed.
        func fingerprint(_ i: Int) -> UUID? { fingerprints[i] }

        /// Why source `i` cannot be baked, found before decoding.
        func failure(_ i: Int) -> Failure? { failures.isEmpty ? nil : failures[i] }

        /// Whether source `i` was modified too recently to be baked this time (`--min-age`): its
        /// previous entry stays.
        func isDeferred(_ i: Int) -> Bool { !deferrals.isEmpty && deferrals[i] }

        /// Whether source `i` competes for a slot of its own: it neither failed nor was deferred.
        func isBakeable(_ i: Int) -> Bool { failure(i) == nil && !isDeferred(i) }

        /// Defers source `i` (`--min-age`).
        mutating func deferSource(_ i: Int) {
            if deferrals.isEmpty { deferrals = Array(repeating: false, count: files.count) }
            deferrals[i] = true
        }
    }
}

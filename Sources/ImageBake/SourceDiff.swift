import Foundation
import ImageManifest
import ImageTableCore
import Synchronization

/// The diff step of a bake: for every scanned source, what the planner needs to know, reading as
/// little as possible.
///
/// - A source whose stat the state trusts has a known fingerprint: one `stat` (the scan's), no
///   read.
/// - A source whose key some table of its family holds, and whose stat is new (or `--rehash`), is
///   read once to fingerprint it: unchanged bytes behind a new stat (a `touch`, a copy, a CI
///   cache restore) cost this read, never a decode.
/// - A source no table holds is only peeked at (its first bytes: is it an image?); the worker
///   that decodes it fingerprints exactly the bytes it decodes. What the peek found is remembered
///   under the file's stat (``BakeState/peekedImage``, ``BakeState/peekedNotImage``), so a source
///   no bake decodes (left out of a full table, failing, not an image) is not opened again while
///   its stat holds: an unchanged re-bake opened each of them every time.
///
/// A path several families share is read once. Reads run on `jobs` threads, in path order.
///
/// A file deleted between the listing and its read here is *vanished*: removed, as one the worker
/// then finds gone is, never a failure (`docs/BAKE.md`, "Deleted is removed, not failed").
struct SourceDiff {
    let state: BakeState
    let decoding: DecodeOptions
    let rehash: Bool
    let jobs: Int
    /// Told of each new or changed source read, for a progress display.
    var stages: StageProgress?
    /// Files the state remembers before the diff commits them (``BakeOptions/stateBatch``): a
    /// first bake peeks at every source, and a record per source held to the run's first commit
    /// was the largest part of its memory (15 MB of 38 at 100,000 sources).
    var stateBatch = Int.max

    /// One family as scanned: its sources, and what its tables held when the bake began.
    struct Scanned {
        /// The sources, sorted by key.
        let sources: [SourceFile]
        /// What the family's tables held, shared with the plan.
        let held: FamilyHeld
        /// What its decodes depend on besides the bytes, to find the failures the state remembers.
        var failureSettings = ""
    }

    /// What the diff found of one family.
    struct Family {
        /// The planner's sources, in scan order.
        var sources: BakePlanner.Sources
        /// Sources the scan listed that were gone when the diff read them.
        let vanished: [SourceFile]
    }

    /// The diff's first half: every (family, source) once, in path order, with the fingerprints
    /// the state trusts.
    ///
    /// It runs before the tables' entries are read (``FamilyHeld``), and takes the state's known
    /// files and frees them on return, so that they and the tables' entries (dozens of bytes a
    /// source each) are never held at once.
    struct Trusted {
        /// Every (family, source), sorted by path.
        fileprivate let all: [(family: Int32, index: Int32)]
        /// One work item per distinct path: its first position in ``all``.
        fileprivate let starts: [Int32]
        /// What each work item came to: its trusted fingerprint so far.
        fileprivate let outcomes: Outcomes
        /// Whether every file the state knew was listed by the scan: then the state has nothing
        /// to forget but files that vanish later (`Baker`'s `forgetRemoved` is skipped).
        let listsEveryKnownFile: Bool
    }

    /// Finds what the state trusts of each family's `sources`, in scan order.
    ///
    /// Memory is a few dozen bytes per source beyond the sources themselves: an array of indices
    /// sorted by path, and the outcomes an array beside it.
    ///
    /// - Parameter sources: per family, its scanned files, sorted by key.
    /// - Returns: the work items in path order, each trusted file's fingerprint found.
    func trust(_ sources: [[SourceFile]]) -> Trusted {
        // Every (family, source) once, sorted by path: a path several families list is worked
        // out once, read if any of them holds its key. In path order, since with one thread the
        // reads should come in the same order every time (reproducible traces, forced races).
        var all: [(family: Int32, index: Int32)] = []
        all.reserveCapacity(sources.reduce(0) { $0 + $1.count })
        for (f, files) in sources.enumerated() {
            for i in files.indices { all.append((Int32(f), Int32(i))) }
        }
        func file(_ item: (family: Int32, index: Int32)) -> SourceFile { sources[Int(item.family)][Int(item.index)] }
        all.sort { Self.pathOrder(file($0), file($1)) < 0 }
        var starts: [Int32] = []
        for (position, item) in all.enumerated() {
            if let last = starts.last, Self.pathOrder(file(all[Int(last)]), file(item)) == 0 { continue }
            starts.append(Int32(position))
        }
        let outcomes = Outcomes(count: starts.count)
        // Taken even with `--rehash`, which trusts nothing: freed here, not held to the end.
        let known = state.takeKnownFiles()
        let order = all, firsts = starts, rehash = rehash
        // Known files the scan listed, counted across the threads.
        let listed = AtomicCounter()
        Parallel.forEach(firsts.count, threads: jobs) { w in
            let item = order[Int(firsts[w])]
            let file = sources[Int(item.family)][Int(item.index)]
            guard let record = known.record(path: file.path) else { return }
            // Distinct paths, each known at most once: the count says whether any known file
            // went unlisted (a path digest's collision only keeps a stale row, as it may trust one).
            listed.value.add(1, ordering: .relaxed)
            if !rehash, let trusted = known.fingerprint(of: record, stat: file.stat) { outcomes.set(w, (trusted, nil, false)) }
        }
        return Trusted(all: all, starts: starts, outcomes: outcomes,
                       listsEveryKnownFile: listed.value.load(ordering: .relaxed) == known.files.count)
    }

    /// Each family's sources with what the diff learnt: ``trust(_:)``, then ``run(_:trusted:)``.
    ///
    /// - Parameter families: per family, its scanned sources and what its tables hold.
    /// - Returns: per family, the planner's sources and those that vanished.
    func run(_ families: [Scanned]) -> [Family] {
        run(families, trusted: trust(families.map(\.sources)))
    }

    /// The diff's second half: reads each file whose fingerprint the state does not trust (one
    /// some table of its family holds, to fingerprint it) or peeks at it (one no table holds: is
    /// it an image?), then hands each family its sources with what was learnt.
    ///
    /// - Parameters:
    ///   - families: per family, its scanned sources (those given to ``trust(_:)``) and what its
    ///     tables hold.
    ///   - trusted: what ``trust(_:)`` found of them.
    /// - Returns: per family, the planner's sources and those that vanished.
    func run(_ families: [Scanned], trusted: Trusted) -> [Family] {
        let all = trusted.all, starts = trusted.starts, outcomes = trusted.outcomes
        // Per work item, whether to read it: a path is read if any family listing it holds its
        // key. And per family, in scan order, each source's work item.
        var reads = Array(repeating: false, count: starts.count)
        var work = families.map { Array(repeating: Int32(-1), count: $0.sources.count) }
        var w = -1
        for (position, item) in all.enumerated() {
            if w + 1 < starts.count && Int(starts[w + 1]) == position { w += 1 }
            let (f, i) = (Int(item.family), Int(item.index))
            reads[w] = reads[w] || families[f].held.holds(families[f].sources[i].key)
            work[f][i] = Int32(w)
        }
        do {
            // Positions as 32 bits: on a first bake, every source is here.
            for w in starts.indices where reads[w] && outcomes.get(w).fingerprint == BakeState.peekedImage {
                // A key a table holds needs its fingerprint: a peek's record says only "image".
                // One that says "not an image" is all the plan needs: skipped, the entry kept.
                outcomes.set(w, (nil, nil, false))
            }
            let untrusted = Array(starts.indices.lazy.filter { outcomes.get($0).fingerprint == nil }.map { Int32($0) })
            let toRead = reads, batch = stateBatch
            let examined = stages?.counter(of: untrusted.count)
            Parallel.forEach(untrusted.count, threads: jobs) { u in
                let w = Int(untrusted[u]), item = all[Int(starts[w])]
                outcomes.set(w, examine(families[Int(item.family)].sources[Int(item.index)], read: toRead[w]))
                state.commit(ifAtLeast: batch)
                examined?()
            }
        }
        // Back to the families, in scan order.
        return families.enumerated().map { f, family in
            // The scan's array itself, unless some of its files vanished (rare): then a copy without them.
            var files = family.sources, vanished: [SourceFile] = []
            if work[f].contains(where: { outcomes.isVanished(Int($0)) }) {
                vanished = zip(files, work[f]).filter { outcomes.isVanished(Int($1)) }.map(\.0)
                files = zip(files, work[f]).filter { !outcomes.isVanished(Int($1)) }.map(\.0)
                work[f].removeAll { outcomes.isVanished(Int($0)) }
            }
            var fingerprints: [UUID?] = []
            fingerprints.reserveCapacity(files.count)
            var failures: [Int: BakePlanner.Failure] = [:]
            let remembered = rehash ? [:] : state.failureIndex(root: files.first?.root ?? "", settings: family.failureSettings)
            var seen: [BakeState.FailureKey] = []
            for (i, w) in work[f].enumerated() {
                var outcome = outcomes.get(Int(w))
                if BakeState.isPeek(outcome.fingerprint) {
                    // What a peek found, for a file it need not open again; refused by its size
                    // first, as a read is (a lower --max-source-size let a recorded file win a
                    // slot at every bake, then fail in the worker).
                    let path = files[i].path
                    if let problem = SourceRead.sizeProblem(files[i].stat.size, maxBytes: decoding.maxSourceBytes, path: path) {
                        outcome = (nil, problem, false)
                    } else {
                        outcome = (nil, outcome.fingerprint == BakeState.peekedNotImage ? Self.notAnImage(path) : nil, false)
                    }
                }
                fingerprints.append(outcome.fingerprint)
                if let failure = outcome.failure {
                    failures[i] = BakePlanner.Failure(failure.at(files[i].path, key: files[i].key))
                    // Refused before its decode (over a lower --max-source-size, unreadable
                    // now): the file is there, so its row stays for the bake that reads it;
                    // forgotten, the next bake decoded the file again.
                    if !remembered.isEmpty, let (row, _) = remembered[files[i].key] { seen.append(row) }
                } else if !remembered.isEmpty, let (row, record) = remembered[files[i].key] {
                    seen.append(row)
                    if !BakeState.trusts(record, stat: files[i].stat) {
                        state.addPendingFailure(row, nil)  // the file changed: the row says nothing now
                    } else if !(outcome.fingerprint.map { family.held.isUnchanged(files[i].key, source: $0) } ?? false) {
                        // Failed to decode at an earlier bake, unchanged since: as if it failed
                        // before decoding. Not when the tables hold its very bytes already.
                        failures[i] = BakePlanner.Failure(BakeState.failure(record, path: files[i].path).at(files[i].path, key: files[i].key))
                    }
                }
            }
            state.markSeen(seen)
            return Family(sources: BakePlanner.Sources(files: files, fingerprints: fingerprints, failures: failures), vanished: vanished)
        }
    }

    /// Compares two files' paths byte by byte without building them (a sort of a million
    /// sources would otherwise build forty million strings): negative, zero or positive.
    static func pathOrder(_ a: SourceFile, _ b: SourceFile) -> Int {
        func order<S: Sequence<UInt8>>(_ x: S, _ y: S) -> Int {
            var i = x.makeIterator(), j = y.makeIterator()
            while true {
                switch (i.next(), j.next()) {
                case (nil, nil): return 0
                case (nil, _): return -1
                case (_, nil): return 1
                case let (p?, q?): if p != q { return p < q ? -1 : 1 }
                }
            }
        }
        if a.root == b.root { return order(a.key.utf8, b.key.utf8) }
        let slash = CollectionOfOne(UInt8(ascii: "/"))
        return order([Array(a.root.utf8), Array(slash), Array(a.key.utf8)].joined(), [Array(b.root.utf8), Array(slash), Array(b.key.utf8)].joined())
    }

    fileprivate typealias Outcome = (fingerprint: UUID?, failure: ImageTableError?, vanished: Bool)

    /// The outcomes of the work items, written by the reading threads: fingerprints and flags in
    /// a plain array, failures apart.
    ///
    /// The storage is raw memory, not arrays: a mutating access to an array property from two
    /// threads at once is an exclusivity violation (a trap) even when they touch different elements.
    fileprivate final class Outcomes: @unchecked Sendable {
        private let fingerprints: UnsafeMutableBufferPointer<UUID?>
        private let vanished: UnsafeMutableBufferPointer<Bool>
        private let failures = Mutex([Int: ImageTableError]())

        init(count: Int) {
            fingerprints = .allocate(capacity: count)
            fingerprints.initialize(repeating: nil)
            vanished = .allocate(capacity: count)
            vanished.initialize(repeating: false)
        }

        deinit {
            fingerprints.deallocate()
            vanished.deallocate()
        }

        /// Each index is written by one thread only, and read after every thread has joined.
        func set(_ i: Int, _ outcome: Outcome) {
            fingerprints[i] = outcome.fingerprint
            vanished[i] = outcome.vanished
            if let failure = outcome.failure { failures.withLock { $0[i] = failure } }
        }

        func get(_ i: Int) -> Outcome {
            (fingerprints[i], failures.withLock { $0.isEmpty ? nil : $0[i] }, vanished[i])
        }

        func isVanished(_ i: Int) -> Bool { vanished[i] }
    }

    /// The skip of a file that is not an image by its first bytes.
    static func notAnImage(_ path: String) -> ImageTableError {
        ImageTableError(.notAnImage, "not an image by its first bytes (JPEG, PNG, GIF, WebP, TIFF or HEIF); skipped", path: path)
    }

    /// Reads or peeks at a file whose fingerprint the state does not trust.
    private func examine(_ file: SourceFile, read: Bool) -> Outcome {
        let path = file.path
        // An empty file, or one over the size limit, is refused by its listed size, unopened:
        // both were opened by every bake.
        if let problem = SourceRead.sizeProblem(file.stat.size, maxBytes: decoding.maxSourceBytes, path: path) {
            return (nil, problem, false)
        }
        do throws(ImageTableError) {
            let image: Bool
            var fingerprint: UUID?
            if read {
                let bytes = try SourceRead(path: path, maxBytes: decoding.maxSourceBytes)
                (image, fingerprint) = (ImageSignature.format(of: bytes.header) != nil, bytes.fingerprint)
                // Not an image: remembered as such, not by its bytes' fingerprint, which the next
                // bake would trust and take for a changed image to decode (it failed in the
                // worker, and the bakes after alternated between skipping and failing it).
                state.remember(file, BakeState.FileRecord(stat: bytes.stat, fingerprint: image ? bytes.fingerprint! : BakeState.peekedNotImage,
                                                          checkedNs: bytes.startedNs, tables: []))
            } else {
                let startedNs = FileStat.now
                let peeked = try SourceRead.peek(path: path, maxBytes: decoding.maxSourceBytes)
                image = ImageSignature.format(of: peeked.header) != nil
                state.remember(file, BakeState.FileRecord(stat: peeked.stat, fingerprint: image ? BakeState.peekedImage : BakeState.peekedNotImage,
                                                          checkedNs: startedNs, tables: []))
            }
            return (fingerprint, image ? nil : Self.notAnImage(path), false)
        } catch {
            // The same test as the worker's (`BakeRun`): a file that cannot be opened and is no
            // longer there was deleted, not damaged.
            if error.code == .unreadable && FileStat(path: path) == nil { return (nil, nil, true) }
            return (nil, error, false)
        }
    }
}

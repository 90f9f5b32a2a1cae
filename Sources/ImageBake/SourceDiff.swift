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
///   that decodes it fingerprints exactly the bytes it decodes.
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

    /// One family as scanned: its sources, and what its tables held when the bake began.
    struct Scanned {
        /// The sources, sorted by key.
        let sources: [SourceFile]
        /// What the family's tables held, shared with the plan.
        let held: FamilyHeld
    }

    /// What the diff found of one family.
    struct Family {
        /// The planner's sources, in scan order.
        var sources: BakePlanner.Sources
        /// Sources the scan listed that were gone when the diff read them.
        let vanished: [SourceFile]
    }

    /// Each family's sources with what the diff learnt.
    ///
    /// Memory is a few dozen bytes per source beyond the sources themselves: the work is an
    /// array of indices sorted by path, the outcomes an array beside it, and failures (rare) are
    /// kept apart, so that a bake of a million sources does not hold a million error values.
    ///
    /// - Parameters:
    ///   - families: per family, its scanned sources and what its tables hold.
    /// - Returns: per family, the planner's sources and those that vanished.
    func run(_ families: [Scanned]) -> [Family] {
        // Every (family, source) once, sorted by path: a path several families list is worked
        // out once, read if any of them holds its key. In path order, since with one thread the
        // reads should come in the same order every time (reproducible traces, forced races).
        var all: [(family: Int32, index: Int32)] = []
        all.reserveCapacity(families.reduce(0) { $0 + $1.sources.count })
        for (f, family) in families.enumerated() {
            for i in family.sources.indices { all.append((Int32(f), Int32(i))) }
        }
        func file(_ item: (family: Int32, index: Int32)) -> SourceFile { families[Int(item.family)].sources[Int(item.index)] }
        all.sort { Self.pathOrder(file($0), file($1)) < 0 }
        // One work item per distinct path: its first position in `all`, and whether to read it.
        var starts: [Int32] = []
        var reads: [Bool] = []
        for (position, item) in all.enumerated() {
            let holds = families[Int(item.family)].held.holds(file(item).key)
            if let last = starts.last, Self.pathOrder(file(all[Int(last)]), file(item)) == 0 {
                reads[reads.count - 1] = reads[reads.count - 1] || holds
            } else {
                starts.append(Int32(position))
                reads.append(holds)
            }
        }
        let outcomes = Outcomes(count: starts.count)
        do {
            // Each work item's file is looked up where it lies, not copied into an array of its own.
            let order = all, firsts = starts, toRead = reads
            // Held only while the reads need it: freed before the planner's sources are built.
            let known = state.takeKnownFiles()
            Parallel.forEach(firsts.count, threads: jobs) { w in
                let item = order[Int(firsts[w])]
                outcomes.set(w, examine(families[Int(item.family)].sources[Int(item.index)], read: toRead[w], known: known))
            }
        }
        // Back to the families, in scan order.
        var work = Array(repeating: [Int32](), count: families.count)
        for (f, family) in families.enumerated() { work[f] = Array(repeating: -1, count: family.sources.count) }
        var w = -1
        for (position, item) in all.enumerated() {
            if w + 1 < starts.count && Int(starts[w + 1]) == position { w += 1 }
            work[Int(item.family)][Int(item.index)] = Int32(w)
        }
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
            for (i, w) in work[f].enumerated() {
                let outcome = outcomes.get(Int(w))
                fingerprints.append(outcome.fingerprint)
                if let failure = outcome.failure { failures[i] = BakePlanner.Failure(failure.at(files[i].path, key: files[i].key)) }
            }
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

    private typealias Outcome = (fingerprint: UUID?, failure: ImageTableError?, vanished: Bool)

    /// The outcomes of the work items, written by the reading threads: fingerprints and flags in
    /// a plain array, failures apart.
    ///
    /// The storage is raw memory, not arrays: a mutating access to an array property from two
    /// threads at once is an exclusivity violation (a trap) even when they touch different elements.
    private final class Outcomes: @unchecked Sendable {
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

    private func examine(_ file: SourceFile, read: Bool, known: BakeState.TrustedFiles) -> Outcome {
        let path = file.path
        if !rehash, let trusted = known.fingerprint(path: path, stat: file.stat) { return (trusted, nil, false) }
        do throws(ImageTableError) {
            let header: [UInt8]
            var fingerprint: UUID?
            if read {
                let bytes = try SourceRead(path: path, maxBytes: decoding.maxSourceBytes)
                state.remember(file, BakeState.FileRecord(stat: bytes.stat, fingerprint: bytes.fingerprint!,
                                                                checkedNs: bytes.startedNs, tables: []))
                (header, fingerprint) = (bytes.header, bytes.fingerprint)
            } else {
                header = try SourceRead.peek(path: path, maxBytes: decoding.maxSourceBytes).header
            }
            guard ImageSignature.format(of: header) != nil else {
                return (fingerprint, ImageTableError(.notAnImage, "not an image by its first bytes (JPEG, PNG, GIF, WebP, TIFF or HEIF); skipped",
                                                     path: path), false)
            }
            return (fingerprint, nil, false)
        } catch {
            // The same test as the worker's (`BakeRun`): a file that cannot be opened and is no
            // longer there was deleted, not damaged.
            if error.code == .unreadable && FileStat(path: path) == nil { return (nil, nil, true) }
            return (nil, error, false)
        }
    }
}

/// Runs `count` iterations on `threads` threads of our own (Dispatch's concurrent loop runs one
/// per core, and file reads want more than that on slow disks).
enum Parallel {
    static func forEach(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        let next = Counter()
        let group = DispatchGroup()
        for _ in 0..<max(1, min(threads, count)) {
            group.enter()
            Thread.detachNewThread {
                while true {
                    let i = next.value.add(1, ordering: .relaxed).oldValue
                    guard i < count else { break }
                    body(i)
                }
                group.leave()
            }
        }
        group.wait()
    }

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
}

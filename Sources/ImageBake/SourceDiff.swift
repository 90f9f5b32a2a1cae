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

    /// What the diff found of one family.
    struct Family {
        /// The planner's sources, in scan order.
        let sources: [BakePlanner.Source]
        /// Sources the scan listed that were gone when the diff read them.
        let vanished: [SourceFile]
    }

    /// Each family's sources with what the diff learnt.
    ///
    /// - Parameters:
    ///   - families: per family, its scanned sources and the keys its tables hold.
    /// - Returns: per family, the planner's sources and those that vanished.
    func run(_ families: [(sources: [SourceFile], held: Set<String>)]) -> [Family] {
        // Work out each path once, even when several families list it.
        var work: [String: (file: SourceFile, read: Bool)] = [:]
        for family in families {
            for file in family.sources {
                let read = family.held.contains(file.key) || work[file.path]?.read == true
                work[file.path] = (file, read)
            }
        }
        // In path order: a dictionary's order changes from run to run, and with one thread the
        // reads should come in the same order every time (reproducible traces, forced races).
        let items = work.values.sorted { $0.file.path < $1.file.path }
        let results = Mutex([String: Outcome]())
        Parallel.forEach(items.count, threads: jobs) { i in
            let outcome = examine(items[i].file, read: items[i].read)
            results.withLock { $0[items[i].file.path] = outcome }
        }
        let found = results.withLock { $0 }
        return families.map { family in
            let vanished = family.sources.filter { found[$0.path]!.vanished }
            let sources = family.sources.filter { !found[$0.path]!.vanished }.map { file in
                let outcome = found[file.path]!
                return BakePlanner.Source(file: file, fingerprint: outcome.fingerprint, failure: outcome.failure?.at(file.path, key: file.key))
            }
            return Family(sources: sources, vanished: vanished)
        }
    }

    private typealias Outcome = (fingerprint: UUID?, failure: ImageTableError?, vanished: Bool)

    private func examine(_ file: SourceFile, read: Bool) -> Outcome {
        if !rehash, let known = state.trustedFingerprint(path: file.path, stat: file.stat) { return (known, nil, false) }
        do throws(ImageTableError) {
            let header: [UInt8]
            var fingerprint: UUID?
            if read {
                let bytes = try SourceRead(path: file.path, maxBytes: decoding.maxSourceBytes)
                state.remember(path: file.path, BakeState.FileRecord(stat: bytes.stat, fingerprint: bytes.fingerprint!,
                                                                     checkedNs: bytes.startedNs, tables: []))
                (header, fingerprint) = (bytes.header, bytes.fingerprint)
            } else {
                header = try SourceRead.peek(path: file.path, maxBytes: decoding.maxSourceBytes).header
            }
            guard ImageSignature.format(of: header) != nil else {
                return (fingerprint, ImageTableError(.notAnImage, "not an image by its first bytes (JPEG, PNG, GIF, WebP, TIFF or HEIF); skipped",
                                                     path: file.path), false)
            }
            return (fingerprint, nil, false)
        } catch {
            // The same test as the worker's (`BakeRun`): a file that cannot be opened and is no
            // longer there was deleted, not damaged.
            if error.code == .unreadable && FileStat(path: file.path) == nil { return (nil, nil, true) }
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

import Foundation
import ImageTableCore

extension BakeState {
    /// Whether what was learnt of a file's bytes (its fingerprint, or that they fail to decode)
    /// still holds for the file as it is now: its stat is the recorded one, and it was last
    /// modified more than ``racyMarginNs`` before the bytes were read.
    ///
    /// - Parameters:
    ///   - recorded: the stat recorded with what was learnt.
    ///   - checkedNs: when the bytes were read (or, for a failure, sent to be read).
    ///   - stat: the file's stat now.
    static func trusts(_ recorded: FileStat, checkedNs: Int64, now stat: FileStat) -> Bool {
        recorded == stat && recorded.modifiedNs + racyMarginNs < checkedNs
    }

    /// The fingerprint recorded for a file whose first bytes (a peek) showed an image, and that
    /// no bake has fingerprinted: no SHA-1 gives it, and no table's entry holds it, so it is
    /// never taken for a source's bytes (``SourceDiff`` reads a file a table holds whatever
    /// the peek said).
    static let peekedImage = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// The fingerprint recorded for a file whose first bytes showed no image (skipped).
    static let peekedNotImage = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))

    /// Whether `fingerprint` is one of a peek's records rather than a file's bytes.
    static func isPeek(_ fingerprint: UUID?) -> Bool { fingerprint == peekedImage || fingerprint == peekedNotImage }

    /// What the state knew of a file when it was opened: what trusting its fingerprint needs.
    struct Known: Sendable, Equatable {
        let stat: FileStat
        let fingerprint: UUID
        let checkedNs: Int64
    }

    /// A path's 128-bit digest, in this process: the key of the files known at open. A path is a
    /// string of 100 bytes or more on the heap, for each of a million sources; the digest is 16.
    /// A collision is harmless: trusting a fingerprint also takes the file's whole stat (device,
    /// inode, size, times) to be the recorded one, which two paths share only as links to one file.
    struct PathDigest: Hashable, Comparable, Sendable {
        let low: Int, high: Int

        init(_ bytes: UnsafeRawBufferPointer) {
            var first = Hasher(), second = Hasher()
            first.combine(UInt8(1))
            second.combine(UInt8(2))
            first.combine(bytes: bytes)
            second.combine(bytes: bytes)
            (low, high) = (first.finalize(), second.finalize())
        }

        init(_ path: Substring) {
            var path = path
            self = path.withUTF8 { Self(UnsafeRawBufferPointer($0)) }
        }

        static func < (a: Self, b: Self) -> Bool { (a.low, a.high) < (b.low, b.high) }
    }

    /// The files known at open, sorted by digest and found by binary search: 80 bytes a file,
    /// where a dictionary's table, a power of two at most three quarters full, took 80 to 210.
    struct KnownFiles: Sendable {
        private let files: [(digest: PathDigest, known: Known)]

        /// The files of `rows`, in any order.
        init(_ rows: consuming [(digest: PathDigest, known: Known)]) {
            var sorted = consume rows
            sorted.sort { $0.digest < $1.digest }
            files = sorted
        }

        /// How many files are known.
        var count: Int { files.count }

        /// What is known of the file whose path has `digest`.
        subscript(digest: PathDigest) -> Known? {
            let i = files.partitionPoint { $0.digest < digest }
            return i < files.count && files[i].digest == digest ? files[i].known : nil
        }
    }

    /// The files a state knew when it opened, and what it may trust of them.
    struct TrustedFiles: Sendable {
        let files: KnownFiles
        let root: String

        /// The fingerprint of the file at `path`, when the state knew it and may trust it: the
        /// file's stat is the one recorded, and it was last modified more than
        /// ``BakeState/racyMarginNs`` before its bytes were read.
        ///
        /// - Parameters:
        ///   - path: the file's absolute path.
        ///   - stat: its stat now.
        func fingerprint(path: String, stat: FileStat) -> UUID? {
            record(path: path).flatMap { fingerprint(of: $0, stat: stat) }
        }

        /// What the state knew of the file at `path` (an absolute path), trusted or not.
        func record(path: String) -> Known? { files[PathDigest(BakeState.relativeSubstring(path, root: root))] }

        /// The fingerprint of `record`, when it may be trusted for a file whose stat is `stat` now.
        func fingerprint(of record: Known, stat: FileStat) -> UUID? {
            guard BakeState.trusts(record.stat, checkedNs: record.checkedNs, now: stat) else { return nil }
            return record.fingerprint
        }
    }
}

import Foundation
import ImageManifest
import ImageTableCore

/// Decodes that failed, remembered so that a file that has not changed is not decoded again.
///
/// A truncated or corrupt source fails the same way every time its bytes are decoded with the same
/// settings. Without a memory of it, each bake decoded it again, and it competed for a slot as a
/// source that might decode: in a table with fewer slots than sources it took a place in the
/// selection that a good source never got, bake after bake (`docs/BAKE.md`, "Failures that are
/// remembered"). With it, the next bake treats the file as one that fails before decoding: it is
/// reported again, competes only if its table holds its key (keeping that entry), and costs no
/// decode, until its stat changes or `--rehash` trusts nothing.
extension BakeState {
    /// A failed decode: the file's stat before it was sent to be decoded, and the failure.
    struct FailureRecord: Sendable, Equatable {
        var stat: FileStat
        /// When the file was sent to a worker (its bytes were read after), nanoseconds since 1970.
        var checkedNs: Int64
        var code: ImageTableError.Code
        var message: String
        var cause: String?
    }

    /// A failure's row: the path, relative to the manifest's directory, and what the outcome
    /// depends on besides the bytes (``failureSettings(formats:failOn:maxPixels:)``).
    struct FailureKey: Hashable, Sendable {
        let path: String
        let settings: String
    }

    /// What the state knew of failures when it opened, and which of them the bake looked up.
    struct RememberedFailures: Sendable {
        var records: [FailureKey: FailureRecord] = [:]
        var seen: Set<FailureKey> = []
    }

    /// Failures that the same bytes give again whenever they are decoded with the same settings.
    /// Not a worker's crash or timeout (memory, a loaded machine) nor an unreadable file (I/O),
    /// which may go another way next time.
    /// Nor `unsupported-format`, which a libvips without a loader (HEIF) gives for a file that
    /// another machine, sharing the state through a CI cache, decodes.
    static let rememberedCodes: Set<ImageTableError.Code> = [.truncated, .decodeFailed, .tooManyPixels]

    /// A digest of what a family's decodes depend on besides a source's bytes: its formats (they
    /// set the scale of the decode, and name the rendering version), its `failOn` and the bake's
    /// `--max-pixels`.
    ///
    /// - Parameters:
    ///   - formats: the family's formats' canonical parameters, in the manifest's order.
    ///   - failOn: the family's `failOn`.
    ///   - maxPixels: the largest image decoded.
    static func failureSettings(formats: [String], failOn: String, maxPixels: Int) -> String {
        var hash = SHA256()
        hash.update(Array((["failOn \(failOn)", "maxPixels \(maxPixels)"] + formats).joined(separator: "\n").utf8))
        return String(hash.finalize().prefix(32))
    }

    /// Each family's ``failureSettings(formats:failOn:maxPixels:)``, in the manifest's order.
    ///
    /// - Parameters:
    ///   - manifest: the manifest baked.
    ///   - tables: its tables, whose formats name the families.
    ///   - options: the bake's options (its `--max-pixels`).
    static func failureSettings(of manifest: Manifest, tables: [BakeTable], options: BakeOptions) -> [String] {
        manifest.families.map { family in
            failureSettings(formats: tables.filter { $0.format.family == family.name }.map(\.canonicalParameters),
                            failOn: family.failOn.rawValue, maxPixels: options.decoding.maxPixels)
        }
    }

    /// The failures remembered for files under `root` (a family's resolved sources directory)
    /// with `settings`, by key: what the diff looks its sources up in, without building their
    /// paths. Empty when there are none, or with `--rehash`.
    ///
    /// - Parameters:
    ///   - root: the family's resolved sources directory.
    ///   - settings: the family's ``failureSettings(formats:failOn:maxPixels:)``.
    func failureIndex(root: String, settings: String) -> [String: (key: FailureKey, record: FailureRecord)] {
        guard hasRememberedFailures else { return [:] }
        let prefix = root + "/"
        var index: [String: (key: FailureKey, record: FailureRecord)] = [:]
        for (key, record) in failures.withLock({ $0.records }) where key.settings == settings {
            let path = absolute(key.path)
            // By bytes: a key that begins with a combining mark makes one Character of it and
            // the slash before it, so its failure was never found, and it was decoded again
            // at every bake.
            if let name = PathBytes.remainder(path, after: prefix) { index[String(name)] = (key, record) }
        }
        return index
    }

    /// Whether a remembered failure still stands for a file whose stat is `stat` now, by the rule
    /// fingerprints are trusted by (``trusts(_:checkedNs:now:)``).
    static func trusts(_ record: FailureRecord, stat: FileStat) -> Bool {
        trusts(record.stat, checkedNs: record.checkedNs, now: stat)
    }

    /// The failure a bake reports for a file whose remembered failure stands.
    static func failure(_ record: FailureRecord, path: String) -> ImageTableError {
        ImageTableError(record.code, record.message + " (at an earlier bake; the file has not changed since, so it is not "
                        + "decoded again until it does, or with --rehash)", path: path, cause: record.cause)
    }

    /// Marks rows as looked up by the diff, so that ``forgetUnseenFailures(roots:)`` keeps them.
    func markSeen(_ keys: [FailureKey]) {
        guard !keys.isEmpty else { return }
        failures.withLock { $0.seen.formUnion(keys) }
    }

    /// Remembers that decoding `file` failed with `error`, when the failure is one the same bytes
    /// give again (``rememberedCodes``).
    ///
    /// - Parameters:
    ///   - file: the source, with the stat the scan found.
    ///   - settings: its family's ``failureSettings(formats:failOn:maxPixels:)``.
    ///   - checkedNs: when it was sent to be decoded.
    ///   - error: the failure.
    func rememberFailure(of file: SourceFile, settings: String, checkedNs: Int64, error: ImageTableError) {
        guard Self.rememberedCodes.contains(error.code) else { return }
        let record = FailureRecord(stat: file.stat, checkedNs: checkedNs, code: error.code, message: error.message, cause: error.cause)
        addPendingFailure(FailureKey(path: relative(file.path), settings: settings), record)
    }

    /// Forgets a failure of `file` with `settings`, once it has decoded: writes only when there
    /// was one.
    func forgetFailure(of file: SourceFile, settings: String) {
        guard hasRememberedFailures else { return }
        let key = FailureKey(path: relative(file.path), settings: settings)
        if failures.withLock({ $0.records[key] != nil }) { addPendingFailure(key, nil) }
    }

    /// Forgets the failures under the bake's family directories that no source of it looked up,
    /// once the diff has run: with a family's settings, the file is gone or no longer listed;
    /// with other settings, the file is gone. A row of other settings whose file is there stays:
    /// it may be another manifest's that shares the output directory and bakes the same
    /// directory with another `failOn` (forgetting it had that manifest decode the file again at
    /// every bake, and leave a good source out for it), or a family's before its formats changed,
    /// which goes with its file.
    ///
    /// - Parameter families: each family's sources directory, resolved as the scan resolves
    ///   them, and its ``failureSettings(formats:failOn:maxPixels:)``.
    func forgetUnseenFailures(families: [(root: String, settings: String)]) {
        guard hasRememberedFailures else { return }
        let unseen = failures.withLock { f in f.records.keys.filter { !f.seen.contains($0) } }
        for key in unseen {
            let path = absolute(key.path)
            let under = families.filter { PathBytes.isBelow(path, $0.root) }
            guard !under.isEmpty else { continue }
            var st = stat()
            // Gone is what lstat says of a missing file; a directory that cannot be searched
            // hides it, which says nothing.
            let gone = lstat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)
            if under.contains(where: { $0.settings == key.settings }) || gone { addPendingFailure(key, nil) }
        }
    }
}

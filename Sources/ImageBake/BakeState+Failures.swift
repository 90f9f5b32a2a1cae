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
    static let rememberedCodes: Set<ImageTableError.Code> = [.truncated, .decodeFailed, .unsupportedFormat, .tooManyPixels]

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

    /// The failure remembered for `file` with `settings`, when the file's stat is the one it had
    /// then (and older than ``racyMarginNs`` at the time): an error that says so. Marks the row
    /// as looked up, whatever its stat, so that ``forgetUnseenFailures()`` keeps it.
    func rememberedFailure(of file: SourceFile, settings: String) -> ImageTableError? {
        guard hasRememberedFailures else { return nil }
        let key = FailureKey(path: relative(file.path), settings: settings)
        guard let record = failures.withLock({ f -> FailureRecord? in
            guard let record = f.records[key] else { return nil }
            f.seen.insert(key)
            return record
        }) else { return nil }
        guard record.stat == file.stat, record.stat.modifiedNs + Self.racyMarginNs < record.checkedNs else { return nil }
        return ImageTableError(record.code, record.message + " (at an earlier bake; the file has not changed since, so it is not "
                               + "decoded again until it does, or with --rehash)", path: file.path, cause: record.cause)
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

    /// Forgets the failures no source of the bake looked up, once the diff has run: those of a
    /// file that is gone, and those with a family's settings under its sources directory (the
    /// family no longer lists the file). A row of another manifest that shares the output
    /// directory, with settings of its own, stays while its file exists.
    ///
    /// - Parameter families: each family's sources directory and its settings.
    func forgetUnseenFailures(families: [(sourcesPath: String, settings: String)]) {
        guard hasRememberedFailures else { return }
        let ours = families.map { (root: relative($0.sourcesPath) + "/", settings: $0.settings) }
        let unseen = failures.withLock { f in f.records.keys.filter { !f.seen.contains($0) } }
        for key in unseen {
            let listedHere = ours.contains { key.settings == $0.settings && key.path.hasPrefix($0.root) }
            if listedHere || FileStat(path: absolute(key.path)) == nil { addPendingFailure(key, nil) }
        }
    }
}

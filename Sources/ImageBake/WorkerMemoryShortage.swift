import Foundation
import ImageManifest
import ImageTableCore
import WorkerProtocol

/// How a source that needs more memory than a worker may have (`--max-worker-memory`) shows.
///
/// The limit is the worker's `RLIMIT_DATA`: an allocation past it fails. libvips reports that
/// ("out of memory"), as libjpeg does in its own words ("Insufficient memory") and a thread that
/// cannot get its stack ("Error creating thread: Resource temporarily unavailable"); GLib and
/// Swift's runtime cannot, and end the process (a trap, SIGTRAP or SIGILL; `abort`, SIGABRT).
/// Either way it is the source's failure under that limit, not the file's for ever (it is not
/// remembered: the next bake, perhaps with a higher limit, tries again) and not a sign that
/// workers cannot work (such a death does not count towards the three losses in a row that
/// stop a bake).
enum WorkerMemoryShortage {
    /// Words of a failed allocation in a decoder's cause, compared without case.
    static let words = ["out of memory", "insufficient memory", "failed to allocate", "cannot allocate memory",
                        "error creating thread", "resource temporarily unavailable"]

    /// Signals that end a worker whose allocation failed where no error could be returned.
    static let signals: Set<Int32> = [SIGILL, SIGTRAP, SIGABRT]

    /// Whether `cause`, a failed decode's, says an allocation failed.
    ///
    /// - Parameter cause: the decoder's own words.
    static func isShortage(_ cause: String?) -> Bool {
        guard let cause = cause?.lowercased() else { return false }
        return words.contains { cause.contains($0) }
    }

    /// Whether `loss` is a worker ended by one of ``signals`` while a memory limit held it.
    ///
    /// - Parameters:
    ///   - loss: how the worker was lost.
    ///   - limit: the worker's memory limit, `nil` for none.
    static func mayBeShortage(_ loss: WorkerConnection.Loss, limit: Int?) -> Bool {
        guard limit != nil, case .died(_, let signal?) = loss else { return false }
        return signals.contains(signal)
    }

    /// `error` (a failed decode's, or a lost worker's) saying that the source may need more
    /// memory than a worker may have.
    ///
    /// - Parameters:
    ///   - error: the failure as the worker or the loss gave it.
    ///   - limit: the worker's memory limit.
    ///   - certain: whether the decoder said so (its cause), rather than only died so.
    static func explained(_ error: ImageTableError, limit: Int, certain: Bool) -> ImageTableError {
        let room = "more memory than a worker may have (--max-worker-memory \(ByteSize.describe(limit)))"
        let message = certain ? "it needs \(room)" : "\(error.message); it may have needed \(room)"
        return ImageTableError(error.code, message, path: error.path, key: error.key, cause: error.cause)
    }
}

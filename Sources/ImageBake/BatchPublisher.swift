import Dispatch
import ImageTableCore

/// Publishes one table's batches in the background, one batch at a time.
///
/// Publishing a batch flushes its slots and then its records to disk: milliseconds, several
/// small sources' rendering. Done by the dispatcher that filled the batch, it left that
/// dispatcher's worker with nothing new to render once its queue ran dry (a tenth of a one-worker
/// bake of small sources, measured as the worker's CPU against the render phase's wall time).
/// Here the dispatcher hands the batch over and goes back to its worker.
///
/// One token bounds the work in flight: a dispatcher that hands a batch over while another is
/// being published waits for it, so a table has one batch being published, one filling, and at
/// most one waiting per dispatcher (as before, when each dispatcher published its own). Batches
/// need no order among themselves: each is complete (its slots flushed before its records) on
/// its own. An error does not stop later batches from being tried, as the dispatchers that
/// published their own batches tried theirs; the first error is kept and thrown to every later
/// caller.
final class BatchPublisher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "imagetable.bake.publish")
    private let token = DispatchSemaphore(value: 1)
    private let firstError = AdaptiveMutex<ImageTableError?>(nil)

    /// The first error a batch's publishing threw, if any.
    var failure: ImageTableError? { firstError.withLock { $0 } }

    /// Hands `publish` to the background thread once the batch before it is published.
    ///
    /// - Parameter publish: publishes one batch.
    func submit(_ publish: @escaping @Sendable () throws(ImageTableError) -> Void) {
        token.wait()
        queue.async { [self] in
            do throws(ImageTableError) { try publish() } catch { keep(error) }
            token.signal()
        }
    }

    /// Waits until every batch handed over is published, then runs `last` on this thread.
    ///
    /// - Parameter last: publishes the batch that was still filling.
    /// - Throws: what `last` throws, or else the first error of a batch handed over.
    func drain(_ last: () throws(ImageTableError) -> Void) throws(ImageTableError) {
        token.wait()
        defer { token.signal() }
        try last()
        if let failure { throw failure }
    }

    private func keep(_ error: ImageTableError) {
        firstError.withLock { if $0 == nil { $0 = error } }
    }
}

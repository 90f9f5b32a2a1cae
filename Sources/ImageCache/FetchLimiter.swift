import Foundation
import Synchronization

/// At most a fixed number of source provider calls at once; the others wait their turn, first
/// come first served.
///
/// Each miss has a fetch task of its own, so without a limit a prefetch of a long list calls the
/// provider for every entity at once: hundreds of downloads competing for one connection, none
/// done early. Nuke loads 6 at a time for the same reason. A waiting fetch that is cancelled
/// (its last waiter left) leaves the queue at once.
final class FetchLimiter: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The most calls at once.
    let limit: Int

    /// Runs in ``acquire()`` between finding no place free and queueing: tests only, to release
    /// a place exactly there.
    private let afterFindingNoPlace: (@Sendable () async -> Void)?

    /// A limiter of `limit` calls at once, at least 1.
    ///
    /// - Parameters:
    ///   - limit: the most calls at once.
    ///   - afterFindingNoPlace: for tests: awaited by a call that found no place free, before it
    ///     queues.
    init(limit: Int, afterFindingNoPlace: (@Sendable () async -> Void)? = nil) {
        self.limit = max(1, limit)
        self.afterFindingNoPlace = afterFindingNoPlace
    }

    /// Runs `body` once a place is free; returns `nil` without running it when the calling task
    /// is cancelled before then.
    ///
    /// - Parameter body: the provider call.
    /// - Returns: what `body` returned, or `nil` when cancelled while waiting.
    func run<T>(_ body: () async -> T) async -> T? {
        guard await acquire() else { return nil }
        let place = Place(self)
        defer { if place.finish() { release() } }
        return await Self.$place.withValue(place) { await body() }
    }

    /// Takes a place, waiting for one in turn; `false` when the task is cancelled first.
    func acquire() async -> Bool {
        let id: UInt64? = state.withLock { s in
            if s.running < limit {
                s.running += 1
                return nil
            }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        if let afterFindingNoPlace { await afterFindingNoPlace() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    // Cancelled before it could queue: the handler found nothing to remove.
                    if Task.isCancelled { return false }
                    // A place freed since the first look: its release found no one waiting and
                    // gave it up, so queueing now would wait for a release that may never come.
                    if s.running < limit {
                        s.running += 1
                        return true
                    }
                    s.waiting.append((id, continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard let i = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiting.remove(at: i).continuation
            }
            waiter?.resume(returning: false)
        }
    }

    /// Hands the place to the first waiter, or frees it.
    func release() {
        let next = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            guard !s.waiting.isEmpty else {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}

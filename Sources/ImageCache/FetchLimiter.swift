import Foundation
import Synchronization

/// At most a fixed number of source provider calls at once; the others wait their turn, the
/// highest priority first, then first come first served.
///
/// Each miss has a fetch task of its own, so without a limit a prefetch of a long list calls the
/// provider for every entity at once: hundreds of downloads competing for one connection, none
/// done early. Nuke loads 6 at a time for the same reason. A waiting fetch that is cancelled
/// (its last waiter left) leaves the queue at once.
///
/// Priority is the fetch task's (a prefetch's is `.utility`), raised when a request of higher
/// priority joins the fetch (``raise(flight:to:)``): served in arrival order, a request for an
/// image on screen waited behind every prefetch queued before it (15.7 s behind 2,000 of
/// them at 50 ms each, 165 s behind 20,000).
final class FetchLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        /// The fetch it is for, when the caller named one (``raise(flight:to:)`` finds it so).
        let flight: UInt64?
        var priority: UInt8
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var running = 0
        var waiting: [Waiter] = []
        var nextID: UInt64 = 0

        /// Takes the waiter to serve next: the highest priority, the earliest among equals.
        mutating func takeNext() -> CheckedContinuation<Bool, Never>? {
            guard var best = waiting.indices.first else { return nil }
            for i in waiting.indices.dropFirst() where waiting[i].priority > waiting[best].priority { best = i }
            return waiting.remove(at: best).continuation
        }
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
    /// - Parameters:
    ///   - flight: the fetch it is for, which ``raise(flight:to:)`` names.
    ///   - raised: the priority requests that joined the fetch ask for, read as the call queues
    ///     (a request that joined before it queued raised nothing yet).
    ///   - body: the provider call.
    /// - Returns: what `body` returned, or `nil` when cancelled while waiting.
    func run<T>(flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil, _ body: () async -> T) async -> T? {
        guard await acquire(flight: flight, raised: raised) else { return nil }
        let place = Place(self)
        defer { if place.finish() { release() } }
        return await Self.$place.withValue(place) { await body() }
    }

    /// Takes a place, waiting for one in turn at the current task's priority (or `raised`'s,
    /// when higher); `false` when the task is cancelled first.
    ///
    /// - Parameters:
    ///   - flight: the fetch it is for, if any.
    ///   - raised: see ``run(flight:raised:_:)``.
    func acquire(flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil) async -> Bool {
        let own = Task.currentPriority.rawValue
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
                    // Read under this lock: a join's ``raise(flight:to:)``, which takes it, comes
                    // either before (and is read here) or after (and finds this waiter).
                    let priority = max(own, raised?() ?? 0)
                    s.waiting.append(Waiter(id: id, flight: flight, priority: priority, continuation: continuation))
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

    /// How many calls wait for a place (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// How many places are taken (for tests).
    var runningCount: Int { state.withLock { $0.running } }

    /// Hands the place to the next waiter, or frees it.
    func release() {
        let next = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            guard let next = s.takeNext() else {
                s.running -= 1
                return nil
            }
            return next
        }
        next?.resume(returning: true)
    }

    /// Raises the priority `flight`'s provider call waits at to `priority`, when it waits at a
    /// lower one: a request that joins a prefetch's fetch is not served at the prefetch's.
    ///
    /// - Parameters:
    ///   - flight: the fetch, as given to ``run(flight:raised:_:)``.
    ///   - priority: the joining request's priority.
    func raise(flight: UInt64, to priority: TaskPriority) {
        state.withLock { s in
            guard let i = s.waiting.firstIndex(where: { $0.flight == flight }) else { return }
            s.waiting[i].priority = max(s.waiting[i].priority, priority.rawValue)
        }
    }
}

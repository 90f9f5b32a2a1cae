import Foundation
import Synchronization

/// At most a fixed number of source provider calls at once; the others wait their turn, the
/// highest priority first, then first come first served.
///
/// Each miss has a fetch task of its own, so without a limit a prefetch of a long list calls the
/// provider for every entity at once: hundreds of downloads competing for one connection, none
/// done early. Nuke loads 6 at a time for the same reason. A waiting fetch that is cancelled
/// (its last waiter left) stops waiting at once (its place in the queue is skipped when
/// reached). A fetch keeps its place until its render begins (``runKeepingPlace(flight:raised:_:)``).
///
/// Priority is the fetch task's (a prefetch's is `.utility`), raised when a request of higher
/// priority joins the fetch (``raise(flight:to:)``): served in arrival order, a request for an
/// image on screen waited behind every prefetch queued before it (15.7 s behind 2,000 of
/// them at 50 ms each, 165 s behind 20,000).
final class FetchLimiter: Sendable {
    private struct State {
        var running = 0
        /// The waiters' ids, by priority (``PriorityQueue``); a cancelled waiter's id stays until
        /// it is reached, and is skipped then (its continuation is gone).
        var queue = PriorityQueue<UInt64>()
        /// The continuations of the waiters still waiting, by id.
        var waiting: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0

        /// Takes the waiter to serve next: the highest priority, the earliest among equals.
        mutating func takeNext() -> CheckedContinuation<Bool, Never>? {
            while let id = queue.takeNext() {
                if let continuation = waiting.removeValue(forKey: id) { return continuation }
            }
            return nil
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
        guard let (value, kept) = await runKeepingPlace(flight: flight, raised: raised, body) else { return nil }
        kept?.release()
        return value
    }

    /// ``run(flight:raised:_:)``, but the place stays taken after `body` returns, until the
    /// caller releases it: a fetch keeps it until its render begins, so that the sources fetched
    /// and waiting for a render thread are at most ``limit``. Released at the provider's return,
    /// a fast provider let thousands of them wait in memory behind slow renders (a prefetch of
    /// 2,000 photos of 3 MB: 6 GB), and a cancelled prefetch's stayed until its turn came.
    ///
    /// - Returns: what `body` returned and the place, `nil` when the place was not held at the
    ///   end (lent, and not taken back); `nil` when cancelled while waiting.
    func runKeepingPlace<T>(flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil,
                            _ body: () async -> T) async -> (T, KeptPlace?)? {
        guard await acquire(flight: flight, raised: raised) else { return nil }
        let place = Place(self)
        let value = await Self.$place.withValue(place) { await body() }
        return (value, place.finish() ? KeptPlace(self) : nil)
    }

    /// A place kept after its call returned (``runKeepingPlace(flight:raised:_:)``), released
    /// once, by the first of its holders to release it.
    final class KeptPlace: Sendable {
        private let limiter: FetchLimiter
        private let released = Atomic<Bool>(false)

        fileprivate init(_ limiter: FetchLimiter) { self.limiter = limiter }

        /// Gives the place back; later calls do nothing.
        func release() {
            if !released.exchange(true, ordering: .acquiringAndReleasing) { limiter.release() }
        }

        deinit { release() }
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
                    s.queue.append(id, priority: priority, flight: flight)
                    s.waiting[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiting.removeValue(forKey: id) }
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
        state.withLock { $0.queue.raise(flight: flight, to: priority.rawValue) }
    }
}

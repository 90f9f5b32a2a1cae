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

    /// A limiter of `limit` calls at once, at least 1.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// A place taken by ``run(_:)``, which the provider's task can lend back while it waits on
    /// the cache (``lendingPlace(_:)``).
    final class Place: Sendable {
        let limiter: FetchLimiter
        /// Whether the place is held now: a place lent and not had back (the task was cancelled
        /// while it waited for one) is not released again.
        let held = Atomic<Bool>(true)

        init(_ limiter: FetchLimiter) { self.limiter = limiter }
    }

    /// The place the current task's provider call holds, if any.
    @TaskLocal static var place: Place?

    /// Runs `body` once a place is free; returns `nil` without running it when the calling task
    /// is cancelled before then.
    ///
    /// - Parameter body: the provider call.
    /// - Returns: what `body` returned, or `nil` when cancelled while waiting.
    func run<T>(_ body: () async -> T) async -> T? {
        guard await acquire() else { return nil }
        let place = Place(self)
        defer { if place.held.exchange(false, ordering: .acquiringAndReleasing) { release() } }
        return await Self.$place.withValue(place) { await body() }
    }

    /// Runs `body`, a wait on other fetches, with the current provider call's place given back
    /// meanwhile, and takes a place again afterwards.
    ///
    /// A provider that asks the cache for another entity waits for that entity's fetch while it
    /// holds a place: with every place so held (one place, or a list of providers that each
    /// asks), the fetches they wait for could never get one, and every fetch of the cache would
    /// stop. Outside a provider call of this limiter, `body` just runs.
    ///
    /// - Parameter body: the wait.
    /// - Returns: what `body` returned.
    func lendingPlace<T>(_ body: () async -> T) async -> T {
        guard let place = Self.place, place.limiter === self, place.held.exchange(false, ordering: .acquiringAndReleasing) else {
            return await body()
        }
        release()
        let result = await body()
        // Cancelled while waiting for a place again: the provider goes on without one (it was
        // cancelled, and will see it), and nothing is released for it later.
        if await acquire() { place.held.store(true, ordering: .releasing) }
        return result
    }

    private func acquire() async -> Bool {
        let id: UInt64? = state.withLock { s in
            if s.running < limit {
                s.running += 1
                return nil
            }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let cancelled = state.withLock { s -> Bool in
                    // Cancelled before it could queue: the handler found nothing to remove.
                    if Task.isCancelled { return true }
                    s.waiting.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(returning: false) }
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
    private func release() {
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

import Foundation
import Synchronization

// A provider call's place, lent back to the limiter while the provider waits on the cache.
extension FetchLimiter {
    /// The place a provider call of ``run(_:)`` took, which its task lends back while it waits
    /// on other fetches (``lendingPlace(_:)``).
    ///
    /// Several waits of one provider may overlap (`async let` of two entities): the place is
    /// given back when the first begins and taken again when the last ends, never while one
    /// still waits. A provider that returns with a lender still waiting (a task it started)
    /// leaves the place to ``run(_:)``'s end, which releases it only if it is held.
    final class Place: Sendable {
        let limiter: FetchLimiter
        private struct State {
            /// Whether the provider call holds a place now.
            var held = true
            /// Waits under way that lent the place (or joined a lending under way).
            var lenders = 0
            /// A place is being taken again for the provider.
            var retaking = false
            /// The provider call has returned: nothing more is lent or taken.
            var finished = false
        }
        private let state = Mutex(State())

        init(_ limiter: FetchLimiter) { self.limiter = limiter }

        /// A wait begins: whether it takes part in the lending (and so must call ``endLending()``),
        /// and whether the place must be released now.
        fileprivate func beginLending() -> (lends: Bool, release: Bool) {
            state.withLock { s in
                guard !s.finished else { return (false, false) }
                if s.lenders > 0 || s.retaking {
                    s.lenders += 1
                    return (true, false)
                }
                guard s.held else { return (false, false) }
                s.held = false
                s.lenders = 1
                return (true, true)
            }
        }

        /// A lending wait ended: takes the place again when it was the last.
        fileprivate func endLending() async {
            let retake = state.withLock { s -> Bool in
                s.lenders -= 1
                // A retake already under way (a wait that began while it waited, and ended
                // first) decides when it gets a place: a second one would take a second place,
                // which `finish()` never releases (with one place, it waited for itself).
                guard s.lenders == 0, !s.finished, !s.retaking else { return false }
                s.retaking = true
                return true
            }
            guard retake else { return }
            // Cancelled while waiting for a place again: the provider goes on without one (it
            // was cancelled, and will see it), and nothing is released for it later.
            let got = await limiter.acquire()
            let giveBack = state.withLock { s -> Bool in
                s.retaking = false
                guard got else { return false }
                // Another wait began meanwhile, or the provider returned: the place is not ours
                // to keep (the wait under way takes it again when it ends).
                if s.lenders > 0 || s.finished { return true }
                s.held = true
                return false
            }
            if giveBack { limiter.release() }
        }

        /// The provider call returned: whether its place is held, to be released.
        func finish() -> Bool {
            state.withLock { s in
                s.finished = true
                defer { s.held = false }
                return s.held
            }
        }
    }

    /// The place the current task's provider call holds, if any.
    @TaskLocal static var place: Place?

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
        guard let place = Self.place, place.limiter === self else { return await body() }
        let (lends, release) = place.beginLending()
        if release { self.release() }
        let result = await body()
        if lends { await place.endLending() }
        return result
    }
}

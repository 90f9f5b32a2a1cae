import Foundation
@testable import ImageCache
import Synchronization
import TestSupport
import Testing

/// The fetch limiter's lent places, step by step: each test holds the limiter's one place
/// where it wants with gates, so the order of events is fixed, not left to the scheduler.
@Suite struct FetchLimiterTests {
    /// A gate a task waits at until the test opens it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        func wait() async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let open = state.withLock { s -> Bool in
                    if !s.open { s.waiting.append(c) }
                    return s.open
                }
                if open { c.resume() }
            }
        }
        func open() {
            let waiting = state.withLock { s in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            waiting.forEach { $0.resume() }
        }
    }

    /// Wait A ends while another fetch holds the place, so its retake queues; wait B begins and
    /// ends meanwhile. B must not queue a second retake: with one place, that one waited for the
    /// place its own provider had taken back, and the provider never returned.
    @Test func aWaitThatBeginsAndEndsDuringARetakeTakesNoSecondPlace() async throws {
        let limiter = FetchLimiter(limit: 1)
        let aBegan = Gate(), aEnds = Gate(), bBegins = Gate(), otherHolds = Gate(), otherEnds = Gate()
        let steps = Mutex<[String]>([])
        let provider = Task {
            await limiter.run {
                async let a: Void = limiter.lendingPlace {
                    aBegan.open()
                    await aEnds.wait()
                }
                await bBegins.wait()
                await limiter.lendingPlace { steps.withLock { $0.append("b") } }
                await a
                steps.withLock { $0.append("provider") }
            }
        }
        await aBegan.wait()
        // The lent place goes to another fetch, which keeps it until told.
        let other = Task {
            await limiter.run {
                otherHolds.open()
                await otherEnds.wait()
            }
        }
        await otherHolds.wait()
        aEnds.open()             // A ends: its retake waits behind `other`
        try await Task.sleep(for: .milliseconds(50))
        bBegins.open()           // B begins and ends while the retake waits
        try await Task.sleep(for: .milliseconds(50))
        otherEnds.open()         // the retake gets the place; the provider goes on
        let finished = await eventually { steps.withLock { $0.contains("provider") } }
        if !finished { provider.cancel(); other.cancel() }
        #expect(finished, "the provider never returned: \(steps.withLock { $0 })")
        _ = await other.value
        // One place, free again: a fetch gets it.
        let ran = Mutex(false)
        let next = Task { await limiter.run { ran.withLock { $0 = true } } }
        let got = await eventually { ran.withLock { $0 } }
        if !got { next.cancel() }
        #expect(got, "the place was not released: a later fetch waited")
    }

    /// A place released between a waiter's first look (none free) and its queueing was given
    /// up with no one to hand it to, and the waiter slept beside a free place until some later
    /// release (a stress test: 1 pair of fetches in about 450 at one place). Here the release
    /// happens exactly there.
    @Test func aPlaceFreedWhileAWaiterQueuesIsTaken() async throws {
        let looked = Gate(), aHolds = Gate(), aEnds = Gate(), aReleased = Gate()
        let limiter = FetchLimiter(limit: 1, afterFindingNoPlace: {
            looked.open()
            await aReleased.wait()
        })
        let a = Task {
            await limiter.run {
                aHolds.open()
                await aEnds.wait()
            }
        }
        await aHolds.wait()      // B will find no place
        let bRan = Mutex(false)
        let b = Task { await limiter.run { bRan.withLock { $0 = true } } }
        await looked.wait()
        aEnds.open()
        _ = await a.value        // A released its place while B was between its look and its queueing
        aReleased.open()
        let ran = await eventually { bRan.withLock { $0 } }
        if !ran { b.cancel() }
        #expect(ran, "B waited beside a free place")
    }

    /// A limiter of one place, which a call holds (`holder`) until `ends` opens.
    private func heldLimiter() async -> (limiter: FetchLimiter, ends: Gate, holder: Task<Void?, Never>) {
        let limiter = FetchLimiter(limit: 1)
        let holds = Gate(), ends = Gate()
        let holder = Task { await limiter.run { holds.open(); await ends.wait() } }
        await holds.wait()
        return (limiter, ends, holder)
    }

    /// Queues one provider call per name, at its priority and flight, each only once the one
    /// before it waits (so the queue's order is the list's), while a call holds the only place;
    /// then frees the place and returns the order they ran in.
    private func serviceOrder(_ calls: [(name: String, priority: TaskPriority)],
                              meanwhile: (FetchLimiter) -> Void = { _ in }) async -> [String] {
        let (limiter, ends, holder) = await heldLimiter()
        let order = Log()
        var tasks: [Task<Void, Never>] = []
        for (i, call) in calls.enumerated() {
            let name = call.name, flight = UInt64(i + 1)
            tasks.append(Task.detached(priority: call.priority) {
                _ = await limiter.run(flight: flight) { order.append(name) }
            })
            #expect(await eventually { limiter.waitingCount == i + 1 })
        }
        meanwhile(limiter)
        ends.open()
        _ = await holder.value
        for task in tasks { _ = await task.value }
        return order.names
    }

    /// The names of the calls, in the order they ran.
    final class Log: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ name: String) { state.withLock { $0.append(name) } }
        var names: [String] { state.withLock { $0 } }
    }

    /// A request for an image on screen waited behind every prefetch queued before it (15.7 s
    /// behind 2,000 at 50 ms each): the highest priority goes first, arrival order among equals.
    @Test func aHigherPriorityCallGoesFirst() async {
        let order = await serviceOrder([("prefetch 1", .utility), ("prefetch 2", .utility), ("request", .high),
                                        ("prefetch 3", .utility), ("background", .background)])
        #expect(order == ["request", "prefetch 1", "prefetch 2", "prefetch 3", "background"])
    }

    /// A request that joined a prefetch's fetch before its provider call queued (two task hops
    /// later) raised nothing to find: the call reads the fetch's priority as it queues.
    @Test func aFetchJoinedBeforeItQueuesWaitsAtTheJoinersPriority() async {
        let (limiter, ends, holder) = await heldLimiter()
        let order = Log()
        let joined = Task.detached(priority: .utility) {
            _ = await limiter.run(flight: 7, raised: { TaskPriority.high.rawValue }) { order.append("prefetch a request joined") }
        }
        #expect(await eventually { limiter.waitingCount == 1 })
        let other = Task.detached(priority: .medium) { _ = await limiter.run(flight: 8) { order.append("request") } }
        #expect(await eventually { limiter.waitingCount == 2 })
        ends.open()
        _ = await (holder.value, joined.value, other.value)
        #expect(order.names == ["prefetch a request joined", "request"])
    }

    /// A request that joins a prefetch's fetch raises the priority it waits at.
    @Test func aJoinedFetchIsRaised() async {
        let order = await serviceOrder([("prefetch 1", .utility), ("prefetch 2", .utility), ("prefetch 3", .utility)]) { limiter in
            limiter.raise(flight: 3, to: .high)
            limiter.raise(flight: 1, to: .background)  // never lowered
        }
        #expect(order == ["prefetch 3", "prefetch 1", "prefetch 2"])
    }

    /// Waiters that leave (cancelled prefetches) are dropped from the count at once and skipped
    /// when their turn comes: the others run in order, and no place is lost to them. The queue
    /// was one list, searched and shifted at each cancellation under the limiter's lock.
    @Test func cancelledWaitersAreSkippedAndTheOthersKeepTheirOrder() async {
        let (limiter, ends, holder) = await heldLimiter()
        let order = Log()
        var tasks: [Task<Bool, Never>] = []
        for i in 0..<40 {
            tasks.append(Task.detached(priority: i % 4 == 0 ? .high : .utility) {
                await limiter.run(flight: UInt64(i + 1)) { order.append("\(i)") } != nil
            })
            #expect(await eventually { limiter.waitingCount == i + 1 })
        }
        for i in stride(from: 1, to: 40, by: 2) { tasks[i].cancel() }
        #expect(await eventually { limiter.waitingCount == 20 })
        ends.open()
        _ = await holder.value
        var ran: [Int] = []
        for (i, task) in tasks.enumerated() where await task.value { ran.append(i) }
        #expect(ran == Array(stride(from: 0, to: 40, by: 2)))
        let high = stride(from: 0, to: 40, by: 4).map { "\($0)" }, utility = stride(from: 2, to: 40, by: 4).map { "\($0)" }
        #expect(order.names == high + utility)
        #expect(limiter.runningCount == 0 && limiter.waitingCount == 0)
    }
}

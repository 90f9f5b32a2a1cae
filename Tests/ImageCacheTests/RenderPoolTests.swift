import Foundation
@testable import ImageCache
import Synchronization
import TestSupport
import Testing

/// Renders block their thread for tens of milliseconds, so they run on the pool's own threads
/// (never on Swift's cooperative pool), at most `threads` at once. (Every render of the other
/// suites also asserts that it runs on a pool thread.)
@Suite struct RenderPoolTests {
    final class Probe: Sendable {
        let state = Mutex((now: 0, most: 0, offPool: 0, done: false))
        let gate = DispatchSemaphore(value: 0)
    }

    @Test func blockingJobsRunOnPoolThreadsAtMostTheLimitAtOnce() async throws {
        let pool = RenderPool(threads: 2)
        let probe = Probe()
        let jobs = 6
        // Were the jobs on the cooperative pool, this test might never run on to open the gate:
        // a plain thread opens it when it sees that, so such a regression fails instead of hanging.
        // (A pool merely kept busy by other suites only delays the test.)
        Thread {
            while probe.state.withLock({ $0.offPool == 0 && !$0.done }) { Thread.sleep(forTimeInterval: 0.01) }
            if probe.state.withLock({ !$0.done }) { for _ in 0..<jobs { probe.gate.signal() } }
        }.start()
        let tasks = (0..<jobs).map { _ in
            Task {
                await pool.run {
                    probe.state.withLock { s in
                        s.now += 1
                        s.most = max(s.most, s.now)
                        if !RenderPool.isPoolThread { s.offPool += 1 }
                    }
                    probe.gate.wait()
                    probe.state.withLock { $0.now -= 1 }
                }
            }
        }
        #expect(await eventually { probe.state.withLock { $0.now == 2 } })
        try await Task.sleep(for: .milliseconds(50))
        #expect(probe.state.withLock { $0.now } == 2, "the third job waits for a free pool thread")
        let opened = probe.state.withLock { s in
            defer { s.done = true }
            return !s.done && s.offPool == 0
        }
        if opened { for _ in 0..<jobs { probe.gate.signal() } }
        for task in tasks { await task.value }
        #expect(probe.state.withLock { $0.most == 2 && $0.offPool == 0 })
        #expect(!RenderPool.isPoolThread, "a test's own thread is not a pool thread")
    }

    /// What a job's closure holds (a source's bytes) is released once the job has run, while
    /// later jobs still wait: it used to live until the whole queue drained.
    @Test func aJobsCapturesAreReleasedOnceItRan() throws {
        final class Payload: Sendable {}
        final class Weak: @unchecked Sendable { weak var payload: Payload? }
        let pool = RenderPool(threads: 1)
        let (first, second, ran) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let weak = Weak()
        // The only thread waits at `first` while the payload's job, a blocker and one more queue.
        pool.submit { first.wait() }
        do {
            let payload = Payload()
            weak.payload = payload
            pool.submit { _ = payload; ran.signal() }
        }
        pool.submit { second.wait() }
        pool.submit {}
        first.signal()
        ran.wait()
        // The thread is now in the blocker, and one job waits behind it.
        Thread.sleep(forTimeInterval: 0.05)
        #expect(weak.payload == nil, "the finished job's capture is gone while the queue holds others")
        second.signal()
    }

    /// Queued jobs run by priority, then in the order they came; a raised one moves up. In
    /// order alone, a render for an image on screen waited behind every queued prefetch render.
    @Test func queuedJobsRunByPriorityThenInOrder() {
        let pool = RenderPool(threads: 1)
        let (blocker, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let order = Mutex<[String]>([])
        pool.submit { blocker.wait() }
        for (name, priority, flight) in [("a", TaskPriority.low, nil), ("b", .medium, nil), ("c", .low, UInt64(7)), ("d", .high, nil),
                                         ("e", .high, nil)] as [(String, TaskPriority, UInt64?)] {
            pool.submit(priority: priority.rawValue, flight: flight) {
                order.withLock { $0.append(name) }
                done.signal()
            }
        }
        pool.raise(flight: 7, to: .high)
        pool.raise(flight: 8, to: .high)  // no such job: nothing moves
        blocker.signal()
        for _ in 0..<5 { done.wait() }
        // Raised to high, c goes after the jobs already waiting there.
        #expect(order.withLock { $0 } == ["d", "e", "c", "b", "a"])
    }

    /// A job reads the priority of the requests that joined its fetch as it queues: a join
    /// between the fetch's reading of its own priority and the queueing is not lost.
    @Test func aJobQueuesAtTheRaisedPriorityItReads() {
        let pool = RenderPool(threads: 1)
        let (blocker, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let order = Mutex<[String]>([])
        pool.submit { blocker.wait() }
        pool.submit(priority: TaskPriority.medium.rawValue) { order.withLock { $0.append("medium") }; done.signal() }
        pool.submit(priority: TaskPriority.low.rawValue, flight: 1, raised: { TaskPriority.high.rawValue }) {
            order.withLock { $0.append("joined") }
            done.signal()
        }
        blocker.signal()
        for _ in 0..<2 { done.wait() }
        #expect(order.withLock { $0 } == ["joined", "medium"])
    }

    /// The queue keeps each priority's order across its compactions (a list that never drains
    /// drops its first half once 64 places are taken), and a raise moves a job once.
    @Test func theQueueKeepsItsOrderAcrossCompactions() {
        var queue = PriorityQueue<Int>()
        var taken: [Int] = []
        for i in 0..<300 { queue.append(i, priority: 17, flight: UInt64(i)) }
        for _ in 0..<150 { taken.append(queue.takeNext()!) }
        for i in 300..<400 { queue.append(i, priority: 17, flight: UInt64(i)) }
        queue.raise(flight: 399, to: 25)
        queue.raise(flight: 399, to: 25)  // already there: nothing moves
        queue.raise(flight: 5, to: 25)  // taken already: nothing moves
        #expect(queue.count == 250)
        while let next = queue.takeNext() { taken.append(next) }
        #expect(taken == Array(0..<150) + [399] + Array(150..<399) && queue.count == 0)
    }
}

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
}

import Foundation
import ImageTableCore
import Synchronization

/// A few dedicated threads that run blocking work (renders) off Swift's cooperative
/// pool, bridged to async callers with continuations.
///
/// A render blocks its thread for tens of milliseconds; on the cooperative pool (one thread per
/// core) two of them would stall every task in the process. A plain concurrent `DispatchQueue`
/// would instead start a new thread for each blocked job. So jobs queue here, and at most
/// `threadLimit` threads, started on demand, take them in order.
final class RenderPool: Sendable {
    private struct State {
        /// Queued jobs from `head` on; a taken job's place is emptied at once, so what its
        /// closure holds (a source's bytes) goes when it has run, not when the queue drains.
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var threads = 0
        var idle = 0
    }

    /// What the threads share; it outlives the pool until the last thread has left.
    private final class Shared: Sendable {
        let state = Mutex(State())
        let signal = DispatchSemaphore(value: 0)
    }

    private let shared = Shared()
    private static let threadKey = "ImageCache.RenderPool"

    /// Whether the calling thread is a render pool thread: blocking work asserts it, so that a
    /// render that slipped onto the cooperative pool fails in debug builds and tests.
    static var isPoolThread: Bool { Thread.current.threadDictionary[threadKey] as? Bool ?? false }
    /// The most threads the pool starts.
    let threadLimit: Int

    /// Creates a pool; no thread starts until the first job.
    ///
    /// - Parameter threads: the most threads to run at once, at least 1.
    init(threads: Int) {
        threadLimit = max(1, threads)
    }

    deinit {
        let threads = shared.state.withLock { $0.threads }
        for _ in 0..<threads { shared.signal.signal() }
    }

    /// Runs `work` on a pool thread and returns its result; the caller's task suspends meanwhile.
    /// Not cancellable once queued: the work runs to the end.
    ///
    /// - Parameter work: blocking work.
    /// - Returns: what `work` returns.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            submit { continuation.resume(returning: work()) }
        }
    }

    /// Queues `job` for a pool thread, starting one if none is free (internal for the tests,
    /// which need jobs queued in a known order).
    func submit(_ job: @escaping @Sendable () -> Void) {
        let shared = shared
        let start = shared.state.withLock { s -> Bool in
            s.jobs.append(job)
            // Idle threads count down only once they wake, so compare with the queue's length.
            guard s.jobs.count - s.head > s.idle, s.threads < threadLimit else { return false }
            s.threads += 1
            return true
        }
        if start {
            let thread = Thread { Self.work(shared) }
            thread.name = "ImageCache render"
            // libvips and its decoders use deep stacks on large images.
            thread.stackSize = 8 << 20
            thread.start()
        }
        shared.signal.signal()
    }

    /// A thread's loop: one job per signal, until the pool is gone and the queue empty. Each
    /// job comes with one signal, so a woken thread finds a job unless the pool is gone.
    private static func work(_ shared: Shared) {
        Thread.current.threadDictionary[threadKey] = true
        while true {
            shared.state.withLock { $0.idle += 1 }
            shared.signal.wait()
            let job: (@Sendable () -> Void)? = shared.state.withLock { s in
                s.idle -= 1
                guard s.head < s.jobs.count else {
                    s.threads -= 1
                    return nil
                }
                let job = s.jobs[s.head]
                s.jobs[s.head] = nil
                s.head += 1
                if s.head == s.jobs.count {
                    s.jobs.removeAll(keepingCapacity: true)
                    s.head = 0
                } else if s.head >= 64 && s.head * 2 >= s.jobs.count {
                    // A queue that never drains (a long prefetch) would otherwise only grow.
                    s.jobs.removeFirst(s.head)
                    s.head = 0
                }
                return job
            }
            guard let job else { return }
            job()
        }
    }
}

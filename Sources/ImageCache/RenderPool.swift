import Foundation
import ImageTableCore
import Synchronization

/// A few dedicated threads that run blocking work (renders) off Swift's cooperative
/// pool, bridged to async callers with continuations.
///
/// A render blocks its thread for tens of milliseconds; on the cooperative pool (one thread per
/// core) two of them would stall every task in the process. A plain concurrent `DispatchQueue`
/// would instead start a new thread for each blocked job. So jobs queue here, and at most
/// `threadLimit` threads, started on demand, take them: the highest priority first, then in
/// order. Taken in order alone, a render for an image on screen waited behind every prefetch
/// render queued before it (a fast provider lets thousands queue), as a fetch once waited for a
/// place (``FetchLimiter``).
final class RenderPool: Sendable {
    private struct State {
        /// Queued jobs (``PriorityQueue``).
        var jobs = PriorityQueue<@Sendable () -> Void>()
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
    /// - Parameters:
    ///   - flight: the fetch the work renders for, which ``raise(flight:to:)`` names.
    ///   - raised: the priority requests that joined the fetch ask for, read as the job queues
    ///     (a request that joined before then raised nothing here yet).
    ///   - work: blocking work.
    /// - Returns: what `work` returns.
    func run<T: Sendable>(flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil,
                          _ work: @escaping @Sendable () -> T) async -> T {
        let priority = Task.currentPriority.rawValue
        return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            submit(priority: priority, flight: flight, raised: raised) { continuation.resume(returning: work()) }
        }
    }

    /// Queues `job` for a pool thread, starting one if none is free (internal for the tests,
    /// which need jobs queued in a known order).
    ///
    /// - Parameters:
    ///   - priority: its place in the queue (`TaskPriority.rawValue`); equal ones run in order.
    ///   - flight: the fetch it renders for, if any.
    ///   - raised: see ``run(flight:raised:_:)``.
    ///   - job: the work.
    func submit(priority: UInt8 = TaskPriority.medium.rawValue, flight: UInt64? = nil, raised: (@Sendable () -> UInt8?)? = nil,
                _ job: @escaping @Sendable () -> Void) {
        let shared = shared
        let start = shared.state.withLock { s -> Bool in
            // Read under this lock: a join's ``raise(flight:to:)``, which takes it, comes either
            // before (and is read here) or after (and finds this job).
            s.jobs.append(job, priority: max(priority, raised?() ?? 0), flight: flight)
            // Idle threads count down only once they wake, so compare with the queue's length.
            guard s.jobs.count > s.idle, s.threads < threadLimit else { return false }
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

    /// How many jobs wait for a thread (for tests).
    var queuedCount: Int { shared.state.withLock { $0.jobs.count } }

    /// Raises the priority `flight`'s queued render runs at to `priority`, when it is queued at
    /// a lower one: a request that joins a prefetch is not rendered at the prefetch's.
    ///
    /// - Parameters:
    ///   - flight: the fetch, as given to ``run(flight:raised:_:)``.
    ///   - priority: the joining request's priority.
    func raise(flight: UInt64, to priority: TaskPriority) {
        shared.state.withLock { $0.jobs.raise(flight: flight, to: priority.rawValue) }
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
                guard let job = s.jobs.takeNext() else {
                    s.threads -= 1
                    return nil
                }
                return job
            }
            guard let job else { return }
            job()
        }
    }
}

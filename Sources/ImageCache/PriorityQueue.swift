/// The queues of the render pool and of the fetch limiter: jobs by priority, the highest first,
/// each priority's in the order they came, every step O(1) but a raise.
///
/// One list scanned for the highest priority at each take, and shifted by each removal, cost a
/// pass over the whole queue per render: with 20,000 prefetches queued, an estimated 8 GB of
/// moves over the queue's life (20,000² / 2 places of 40 bytes), under the pool's lock.
/// Priorities are few (`TaskPriority`'s values), so each has a first-in, first-out list of its own.
struct PriorityQueue<Job> {
    /// One priority's jobs from `head` on; a taken or raised job's place is emptied at once, so
    /// what its closure holds (a source's bytes) goes when it has run, not when the list drains.
    private struct Level {
        let priority: UInt8
        var jobs: [(flight: UInt64?, job: Job)?] = []
        var head = 0
    }

    /// The levels, the highest priority first.
    private var levels: [Level] = []
    /// The jobs queued.
    private(set) var count = 0

    /// Queues `job` at `priority`, after the jobs already queued at it.
    ///
    /// - Parameters:
    ///   - job: the job.
    ///   - priority: `TaskPriority.rawValue`.
    ///   - flight: the fetch it renders for, which ``raise(flight:to:)`` names.
    mutating func append(_ job: Job, priority: UInt8, flight: UInt64?) {
        let i: Int
        if let found = levels.firstIndex(where: { $0.priority <= priority }), levels[found].priority == priority {
            i = found
        } else {
            i = levels.firstIndex(where: { $0.priority < priority }) ?? levels.count
            levels.insert(Level(priority: priority), at: i)
        }
        levels[i].jobs.append((flight, job))
        count += 1
    }

    /// Takes the job to run next: the highest priority's earliest.
    mutating func takeNext() -> Job? {
        for i in levels.indices {
            while levels[i].head < levels[i].jobs.count {
                let h = levels[i].head
                levels[i].head += 1
                guard let entry = levels[i].jobs[h] else { continue }
                levels[i].jobs[h] = nil
                compact(i)
                count -= 1
                return entry.job
            }
            compact(i)
        }
        return nil
    }

    /// Moves `flight`'s queued job to `priority`, after the jobs queued there, when it waits at
    /// a lower one.
    ///
    /// - Parameters:
    ///   - flight: the fetch, as given to ``append(_:priority:flight:)``.
    ///   - priority: `TaskPriority.rawValue`.
    mutating func raise(flight: UInt64, to priority: UInt8) {
        for i in levels.indices where levels[i].priority < priority {
            guard let j = levels[i].jobs[levels[i].head...].firstIndex(where: { $0?.flight == flight }) else { continue }
            let entry = levels[i].jobs[j]!
            levels[i].jobs[j] = nil
            count -= 1
            append(entry.job, priority: priority, flight: flight)
            return
        }
    }

    /// Drops a level's taken places: all of them once it drains, or the first half of a list
    /// that never drains (a long prefetch), which would otherwise only grow.
    private mutating func compact(_ i: Int) {
        if levels[i].head == levels[i].jobs.count {
            levels[i].jobs.removeAll(keepingCapacity: true)
            levels[i].head = 0
        } else if levels[i].head >= 64 && levels[i].head * 2 >= levels[i].jobs.count {
            levels[i].jobs.removeFirst(levels[i].head)
            levels[i].head = 0
        }
    }
}

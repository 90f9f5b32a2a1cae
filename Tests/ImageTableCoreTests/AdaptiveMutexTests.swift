import Foundation
import ImageTableCore
import Testing

/// The lock a table's writer and a bake's dispatchers share: it must exclude, and let go on a throw.
@Suite struct AdaptiveMutexTests {
    struct Refused: Error, Equatable { let at: Int }

    /// Eight threads add to one unsynchronised pair of counters 20,000 times each, in a critical
    /// section long enough to be interrupted: any overlap loses an increment or leaves the pair
    /// unequal.
    @Test func eightThreadsLoseNoIncrement() {
        let counters = AdaptiveMutex((a: 0, b: 0, torn: 0))
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<20_000 {
                    counters.withLock { c in
                        c.a += 1
                        if c.a != c.b + 1 { c.torn += 1 }
                        c.b += 1
                    }
                }
                group.leave()
            }
        }
        group.wait()
        let result = counters.withLock { $0 }
        #expect(result.a == 160_000 && result.b == 160_000 && result.torn == 0)
    }

    /// A body that throws leaves the value as it changed it, and the lock free for the next.
    @Test func aThrowingBodyReleasesTheLock() throws {
        let value = AdaptiveMutex(0)
        #expect(throws: Refused(at: 1)) {
            try value.withLock { (v: inout Int) throws(Refused) in
                v = 1
                throw Refused(at: v)
            }
        }
        let taken = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            value.withLock { $0 += 1 }
            taken.signal()
        }
        #expect(taken.wait(timeout: .now() + 10) == .success, "the lock stayed held after the throw")
        #expect(value.withLock { $0 } == 2)
    }
}

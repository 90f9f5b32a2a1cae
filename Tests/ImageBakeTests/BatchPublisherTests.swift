import Foundation
import ImageTableCore
import Synchronization
import Testing

@testable import ImageBake

/// The bake's background publishing of a table's batches: the dispatcher that hands a batch over
/// does not wait for its flush, batches are published one at a time in order, and an error is
/// neither lost nor allowed to skip the batches after it.
@Suite struct BatchPublisherTests {
    /// What the batches did, in order, and how many ran at once at most.
    final class Log: Sendable {
        let events = Mutex<[String]>([])
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)

        func run(_ name: String, for seconds: Double = 0) {
            let now = running.add(1, ordering: .sequentiallyConsistent).newValue
            _ = mostAtOnce.max(now, ordering: .sequentiallyConsistent)
            if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
            events.withLock { $0.append(name) }
            running.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    @Test func handingOverABatchDoesNotWaitForItsPublishing() throws {
        let publisher = BatchPublisher()
        let gate = DispatchSemaphore(value: 0)
        let log = Log()
        publisher.submit {
            // Published on this test's thread, it would give up waiting and log itself early.
            _ = gate.wait(timeout: .now() + 2)
            log.run("first")
        }
        // Not published yet: it waits for the gate, which only this thread opens.
        #expect(log.events.withLock { $0 }.isEmpty)
        gate.signal()
        try publisher.drain { log.run("last") }
        #expect(log.events.withLock { $0 } == ["first", "last"])
    }

    @Test func batchesArePublishedOneAtATimeInOrder() throws {
        let publisher = BatchPublisher()
        let log = Log()
        for i in 0..<6 { publisher.submit { log.run("batch \(i)", for: 0.005) } }
        try publisher.drain { log.run("last") }
        #expect(log.events.withLock { $0 } == (0..<6).map { "batch \($0)" } + ["last"])
        #expect(log.mostAtOnce.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test func theFirstErrorIsKeptAndLaterBatchesStillRun() throws {
        let publisher = BatchPublisher()
        let log = Log()
        publisher.submit { log.run("ok") }
        publisher.submit { () throws(ImageTableError) in throw ImageTableError(.noSpace, "first") }
        publisher.submit { () throws(ImageTableError) in throw ImageTableError(.io, "second") }
        publisher.submit { log.run("after") }
        let error = #expect(throws: ImageTableError.self) { try publisher.drain { log.run("last") } }
        #expect(error?.code == .noSpace && error?.message == "first")
        #expect(publisher.failure?.message == "first")
        #expect(log.events.withLock { $0 } == ["ok", "after", "last"])
    }

    @Test func anErrorOfTheLastBatchComesFirst() throws {
        let publisher = BatchPublisher()
        publisher.submit { () throws(ImageTableError) in throw ImageTableError(.io, "earlier") }
        let error = #expect(throws: ImageTableError.self) {
            try publisher.drain { () throws(ImageTableError) in throw ImageTableError(.noSpace, "last") }
        }
        #expect(error?.message == "last")
    }
}

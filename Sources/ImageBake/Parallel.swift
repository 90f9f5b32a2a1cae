import Foundation
import Synchronization

/// Runs `count` iterations on `threads` threads of our own (Dispatch's concurrent loop runs one
/// per core, and file reads want more than that on slow disks).
enum Parallel {
    static func forEach(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        let next = AtomicCounter()
        let group = DispatchGroup()
        for _ in 0..<max(1, min(threads, count)) {
            group.enter()
            Thread.detachNewThread {
                while true {
                    let i = next.value.add(1, ordering: .relaxed).oldValue
                    guard i < count else { break }
                    body(i)
                }
                group.leave()
            }
        }
        group.wait()
    }
}

/// A count that threads add to at once: the next iteration of ``Parallel/forEach(_:threads:_:)``,
/// or what the iterations found.
final class AtomicCounter: Sendable {
    let value = Atomic<Int>(0)
}

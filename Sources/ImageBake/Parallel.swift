import Foundation
import Synchronization

/// Runs `count` iterations on `threads` threads of our own (Dispatch's concurrent loop runs one
/// per core, and file reads want more than that on slow disks).
enum Parallel {
    static func forEach(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        let next = Counter()
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

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
}

import Foundation
import ImageTableCore

/// Reports a bake's stages before rendering (``BakeStage/listing``, ``BakeStage/checking``) to
/// its progress callback, from any thread.
///
/// A stage is reported only once it has lasted ``quiet`` seconds, then at most ten times a
/// second: most bakes list and check their sources in a fraction of a second, and a line in a
/// CI log for each would be noise. A first bake of 300,000 sources, though, spent 21 s there
/// with nothing on the screen.
final class StageProgress: Sendable {
    /// Seconds a stage lasts before it is reported.
    static let quiet = 0.5

    private struct State {
        var stage = BakeStage.listing
        var began = Date()
        /// When the stage's counted work began (``counter(of:)``): what its rate is measured
        /// over. The diff's first steps, before its reads, made the first frames' rate a
        /// fraction of the real one ("~167 min left" for 4 s of checking).
        var workBegan: Date?
        var lastReport: Date?
    }

    private let progress: (@Sendable (BakeProgress) -> Void)?
    private let started: Date
    private let state = AdaptiveMutex(State())

    /// A reporter to `progress`, or one that reports nothing when it is `nil`.
    ///
    /// - Parameters:
    ///   - progress: the bake's progress callback (``BakeOptions/progress``).
    ///   - started: when the bake started (``BakeProgress/elapsed`` counts from it).
    init(_ progress: (@Sendable (BakeProgress) -> Void)?, started: Date) {
        self.progress = progress
        self.started = started
    }

    /// Begins `stage`: its time counts from now.
    func begin(_ stage: BakeStage) {
        state.withLock { $0 = State(stage: stage, began: Date(), lastReport: nil) }
    }

    /// Reports that the current stage has done `done` of `total` (0: not known).
    func update(done: Int, total: Int = 0) {
        guard let progress else { return }
        let report: BakeProgress? = state.withLock { s in
            let now = Date()
            let inStage = now.timeIntervalSince(s.began)
            guard inStage >= Self.quiet, s.lastReport.map({ now.timeIntervalSince($0) >= 0.1 }) ?? true else { return nil }
            s.lastReport = now
            return BakeProgress(stage: s.stage, done: done, total: total, failed: 0, elapsed: now.timeIntervalSince(started),
                                inStage: now.timeIntervalSince(s.workBegan ?? s.began))
        }
        if let report { progress(report) }
    }

    /// A callback for a stage's workers: called with each item done, it counts them across
    /// threads and offers each count to ``update(done:total:)`` (a lock and a clock read, next
    /// to an item that reads a file). Every item: a few large sources on a slow disk, read
    /// every 16th, showed nothing for seconds. The stage's rate counts from this call.
    ///
    /// - Parameter total: the items the stage has to do.
    /// - Returns: what each item calls once done.
    func counter(of total: Int) -> @Sendable () -> Void {
        guard progress != nil else { return {} }
        state.withLock { $0.workBegan = Date() }
        let count = AtomicCounter()
        return { [self] in
            update(done: count.value.add(1, ordering: .relaxed).newValue, total: total)
        }
    }
}

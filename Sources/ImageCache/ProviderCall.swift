import Foundation
import Synchronization

/// A source provider call with a time limit (``ImageCache/Configuration/fetchTimeout``).
///
/// The call runs in a task of its own, which inherits the fetch's priority and task-local
/// values (the lending of its fetch place, the fetch it belongs to) and is cancelled with it.
/// A task group would not do: it waits for every child, so a provider that ignores
/// cancellation would still hold its fetch place, and every miss behind it, for as long as it
/// runs. Here the caller is answered at the limit, and the call runs on alone, its result
/// dropped.
enum ProviderCall {
    /// The provider did not answer in time.
    struct TimedOut: Error, CustomStringConvertible {
        /// The limit, as configured, for the message.
        let seconds: String
        var description: String { "the source provider did not answer within \(seconds) s" }
    }

    /// The caller's one answer: the first of the call's result and the limit, whichever comes
    /// first, given whether the caller is already waiting or not yet.
    private final class Answer: Sendable {
        typealias Outcome = Result<SourceImage, any Error>
        private struct State {
            var waiting: CheckedContinuation<Outcome, Never>?
            var given: Outcome?
            var answered = false
        }
        private let state = Mutex(State())

        /// Waits with `continuation`: resumed at once when the answer is in.
        func wait(_ continuation: CheckedContinuation<Outcome, Never>) {
            let given = state.withLock { s -> Outcome? in
                if s.given == nil { s.waiting = continuation }
                return s.given
            }
            if let given { continuation.resume(returning: given) }
        }

        /// Gives `outcome` unless an answer was given; whether it was this one.
        @discardableResult
        func give(_ outcome: Outcome) -> Bool {
            let (first, waiting) = state.withLock { s -> (Bool, CheckedContinuation<Outcome, Never>?) in
                guard !s.answered else { return (false, nil) }
                s.answered = true
                guard let waiting = s.waiting else {
                    s.given = outcome
                    return (true, nil)
                }
                s.waiting = nil
                return (true, waiting)
            }
            waiting?.resume(returning: outcome)
            return first
        }
    }

    /// Calls `body`, answering with its result or, after `timeout` seconds, ``TimedOut``.
    ///
    /// - Parameters:
    ///   - timeout: the limit in seconds; `nil` runs `body` in the caller's task, unlimited.
    ///   - body: the provider call.
    /// - Returns: what `body` returned or threw, or ``TimedOut``.
    static func run(timeout: Double?, _ body: @escaping @Sendable () async throws -> SourceImage) async -> Result<SourceImage, any Error> {
        guard let timeout, timeout.isFinite, timeout >= 0 else {
            do { return .success(try await body()) } catch { return .failure(error) }
        }
        let answer = Answer()
        let call = Task {
            let result: Result<SourceImage, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            answer.give(result)
        }
        let limit = Task {
            try? await Task.sleep(nanoseconds: UInt64(min(timeout, 1e9) * 1e9))
            guard !Task.isCancelled else { return }
            let shown = timeout == timeout.rounded() ? "\(Int(timeout))" : "\(timeout)"
            if answer.give(.failure(TimedOut(seconds: shown))) { call.cancel() }
        }
        let result = await withTaskCancellationHandler {
            await forwardingEscalation(to: call) {
                await withCheckedContinuation { continuation in answer.wait(continuation) }
            }
        } onCancel: {
            call.cancel()
        }
        limit.cancel()
        return result
    }

    /// Runs `operation`, passing on to `task` any escalation of the calling task's priority:
    /// the call runs in a task of its own (so that a timeout can leave it), which a request
    /// joining a prefetch would not otherwise reach.
    private static func forwardingEscalation<T>(to task: Task<Void, Never>, _ operation: () async -> T) async -> T {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return await operation() }
        return await withTaskPriorityEscalationHandler(operation: operation) { _, raised in task.escalatePriority(to: raised) }
    }
}

import Foundation
import ImageTableCore
import Synchronization

/// What a fetch delivers to its waiters: a handle per format it stored, or why it failed.
typealias FlightOutcome = Result<[String: CachedImage], ImageTableError>

/// What in-flight fetches are keyed by: one source of one family. Requests for any formats of
/// the family share the fetch; another source ID (a newer version) is another fetch.
struct FlightKey: Hashable, Sendable {
    let family: String
    let entityUUID: UUID
    let sourceID: UUID
}

/// One request's place in a fetch, from ``FlightRegistry/join(_:format:start:)``.
struct FlightTicket: Sendable {
    let key: FlightKey
    let flight: UInt64
    let waiter: UInt64
    /// Whether the request joined a fetch that was already under way.
    let joined: Bool
}

/// The fetches under way and who waits for each: the deduplication and cancellation rules of
/// Nuke and Kingfisher, for Swift tasks.
///
/// - Any number of requests for one ``FlightKey`` share one fetch task.
/// - A waiter whose task is cancelled is resumed with `cancelled` at once; the fetch goes on
///   for the others. When the last waiter leaves before the render began, the fetch task is
///   cancelled (its provider call sees it) and forgotten, so a later request starts a fresh fetch
///   rather than joining a dying one. Once the render began (``beginRender(_:flight:)``), the
///   fetch runs to its end and a later request joins it: a second fetch would download and decode
///   again, and wait for the first one's writes of the same keys.
/// - A fetch that ends, well or badly, is forgotten before its waiters resume, so a failure is
///   never served to a later request.
///
/// All state is under one mutex; continuations are resumed and tasks cancelled outside it.
final class FlightRegistry: Sendable {
    private struct Flight {
        let id: UInt64
        /// Waiters by id; `nil` until the waiter's continuation is attached.
        var waiters: [UInt64: CheckedContinuation<FlightOutcome, Never>?] = [:]
        /// The formats waiters asked for.
        var formats: Set<String> = []
        var task: Task<Void, Never>?
        /// Set once the source is drawn: the fetch then ends only with its outcome.
        var rendering = false
        /// The highest priority of the requests that joined it (`TaskPriority.rawValue`): what
        /// its provider call waits for a place at.
        var priority: UInt8 = 0
    }

    private struct State {
        var flights: [FlightKey: Flight] = [:]
        /// Outcomes for waiters that ended (cancelled, or their fetch finished) before their
        /// continuation was attached; `wait` takes them.
        var parked: [UInt64: FlightOutcome] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Joins the fetch for `key`, or starts one.
    ///
    /// - Parameters:
    ///   - key: the source.
    ///   - format: the format the waiter wants.
    ///   - start: creates the fetch task for a new flight id; called under the lock, so it must
    ///     only create the task.
    /// - Returns: the waiter's ticket, to pass to ``wait(_:)``.
    func join(_ key: FlightKey, format: String, start: (UInt64) -> Task<Void, Never>) -> FlightTicket {
        let priority = Task.currentPriority.rawValue
        var escalating: Task<Void, Never>?
        defer {
            // A request joining a prefetch: the fetch task itself runs at the request's priority
            // from now on (its place in the fetch queue is raised by the limiter), where it went
            // on at the prefetch's, behind the pool's other work. Outside the lock.
            if let escalating { Self.escalate(escalating, to: TaskPriority(rawValue: priority)) }
        }
        return state.withLock { s in
            s.nextID += 1
            let waiter = s.nextID
            if var flight = s.flights[key] {
                flight.waiters[waiter] = .some(nil)
                flight.formats.insert(format)
                if priority > flight.priority { escalating = flight.task }
                flight.priority = max(flight.priority, priority)
                s.flights[key] = flight
                return FlightTicket(key: key, flight: flight.id, waiter: waiter, joined: true)
            }
            s.nextID += 1
            var flight = Flight(id: s.nextID)
            flight.waiters[waiter] = .some(nil)
            flight.formats.insert(format)
            flight.priority = priority
            flight.task = start(flight.id)
            s.flights[key] = flight
            return FlightTicket(key: key, flight: flight.id, waiter: waiter, joined: false)
        }
    }

    /// Raises `task`'s priority where the runtime can (Swift 6.2's escalation API).
    private static func escalate(_ task: Task<Void, Never>, to priority: TaskPriority) {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            task.escalatePriority(to: priority)
        }
    }

    /// The highest priority of the requests waiting for `key`'s fetch, while it is under way.
    ///
    /// - Parameter key: the source.
    func priority(of key: FlightKey) -> UInt8? {
        state.withLock { $0.flights[key]?.priority }
    }

    /// Waits for the ticket's fetch; returns `cancelled` as soon as the calling task is cancelled.
    ///
    /// - Parameter ticket: from ``join(_:format:start:)``; wait on each ticket once.
    /// - Returns: the fetch's outcome.
    func wait(_ ticket: FlightTicket) async -> FlightOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: FlightOutcome? = state.withLock { s in
                    if let parked = s.parked.removeValue(forKey: ticket.waiter) { return parked }
                    // A flight ends only after parking an outcome for each unattached waiter, so
                    // it is still there; the guard keeps a broken invariant from hanging the caller.
                    guard s.flights[ticket.key]?.id == ticket.flight else {
                        return .failure(ImageTableError(.notStored, "the fetch ended without an outcome for this request"))
                    }
                    s.flights[ticket.key]!.waiters[ticket.waiter] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            leave(ticket)
        }
    }

    /// Takes a cancelled waiter out of its fetch, cancelling the fetch if it was the last one and
    /// the render has not begun.
    private func leave(_ ticket: FlightTicket) {
        let (continuation, orphaned) = state.withLock { s -> (CheckedContinuation<FlightOutcome, Never>?, Task<Void, Never>?) in
            guard var flight = s.flights[ticket.key], flight.id == ticket.flight,
                  let entry = flight.waiters.removeValue(forKey: ticket.waiter) else { return (nil, nil) }
            if entry == nil { s.parked[ticket.waiter] = .failure(.cancelled(key: nil, format: nil)) }
            if flight.waiters.isEmpty && !flight.rendering {
                s.flights[ticket.key] = nil
                return (entry, flight.task)
            }
            s.flights[ticket.key] = flight
            return (entry, nil)
        }
        continuation?.resume(returning: .failure(.cancelled(key: nil, format: nil)))
        orphaned?.cancel()
    }

    /// Marks the fetch as rendering, so that it is no longer abandoned when its waiters leave;
    /// returns the formats they asked for so far, or `nil` when it was abandoned already (every
    /// waiter left).
    func beginRender(_ key: FlightKey, flight: UInt64) -> Set<String>? {
        state.withLock { s in
            guard s.flights[key]?.id == flight else { return nil }
            s.flights[key]!.rendering = true
            return s.flights[key]!.formats
        }
    }

    /// Ends every fetch at once (the cache closed): forgets them, hands `outcome` to their
    /// waiters, and cancels their tasks, so that no provider call goes on, and none starts, for
    /// what could no longer be stored.
    ///
    /// - Parameter outcome: what every waiter receives.
    func endAll(_ outcome: FlightOutcome) {
        let (continuations, tasks) = state.withLock { s -> ([CheckedContinuation<FlightOutcome, Never>], [Task<Void, Never>]) in
            var attached: [CheckedContinuation<FlightOutcome, Never>] = [], tasks: [Task<Void, Never>] = []
            for flight in s.flights.values {
                for (waiter, continuation) in flight.waiters {
                    if let continuation { attached.append(continuation) } else { s.parked[waiter] = outcome }
                }
                if let task = flight.task { tasks.append(task) }
            }
            s.flights = [:]
            return (attached, tasks)
        }
        for continuation in continuations { continuation.resume(returning: outcome) }
        for task in tasks { task.cancel() }
    }

    /// Ends a fetch: forgets it, then hands `outcome` to every waiter still there.
    func finish(_ key: FlightKey, flight: UInt64, outcome: FlightOutcome) {
        let continuations = state.withLock { s -> [CheckedContinuation<FlightOutcome, Never>] in
            guard let ended = s.flights[key], ended.id == flight else { return [] }
            s.flights[key] = nil
            var attached: [CheckedContinuation<FlightOutcome, Never>] = []
            for (waiter, continuation) in ended.waiters {
                if let continuation { attached.append(continuation) } else { s.parked[waiter] = outcome }
            }
            return attached
        }
        for continuation in continuations { continuation.resume(returning: outcome) }
    }
}

import Dispatch

/// Holds the renders of one family to as many at once as its smallest table has slots.
///
/// A render takes a free slot in each of its family's tables before it decodes, and the slots
/// of the tables that had none once it has decoded, by eviction, waiting while every slot of a
/// table is reserved by renders in progress (``FormatTable``). With more renders at once than a
/// table has slots, two renders could each hold what the other waits for: a family of two
/// formats of `maximumCount` 1 and two render threads, the first render taking the free slot of
/// one table and the second that of the other, each then waited for the other's for 5 s and
/// one failed with `busy`. With no more renders than the smallest table's slots, a render that
/// finds every slot of a table reserved is not among their holders: those renders hold nothing
/// it has, and end.
final class FamilyGate: Sendable {
    private let turns: DispatchSemaphore

    /// A gate for a family whose smallest table has `slots` slots, or `nil` when the render
    /// threads cannot outnumber them (the common case: no gate, no cost).
    ///
    /// - Parameters:
    ///   - slots: the smallest `maximumCount` among the family's formats.
    ///   - renderThreads: how many renders may run at once in the cache.
    init?(slots: Int, renderThreads: Int) {
        guard slots < renderThreads else { return nil }
        turns = DispatchSemaphore(value: max(1, slots))
    }

    /// Runs `body` once fewer than the family's slots are taken by other renders.
    ///
    /// - Parameter body: the render and its publishing.
    /// - Returns: what `body` returns.
    func withTurn<T>(_ body: () -> T) -> T {
        turns.wait()
        defer { turns.signal() }
        return body()
    }
}

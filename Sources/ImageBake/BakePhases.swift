import Foundation

/// Where a bake's wall-clock time went, phase by phase (``Baker`` lists the phases).
///
/// A bake that scales poorly on many cores shows here which phase does not shrink with `-j`:
/// `render` is the only one the workers share; the others run in the bake's own process.
public struct BakePhases: Sendable, Equatable, Encodable {
    /// Opening (creating, rebuilding) and locking the tables, and opening the bake state.
    public var open = 0.0
    /// Listing each family's sources.
    public var scan = 0.0
    /// Comparing the sources with the bake state and the tables: what the state trusts, what
    /// the tables hold, and reading and fingerprinting the sources the state does not trust.
    public var diff = 0.0
    /// Deciding what each table writes, evicts, prunes and leaves out.
    public var plan = 0.0
    /// Pruning, then decoding and rendering every source to bake and publishing its entries.
    public var render = 0.0
    /// Recording the bake in the bake state.
    public var commit = 0.0

    /// No time yet.
    public init() {}
}

/// Times one phase after another: each ``lap(_:)`` charges the time since the last lap to a phase.
struct PhaseClock {
    private var last = DispatchTime.now().uptimeNanoseconds
    private(set) var phases = BakePhases()

    /// Charges the time since the previous lap (or the clock's start) to `phase`.
    mutating func lap(_ phase: WritableKeyPath<BakePhases, Double>) {
        let now = DispatchTime.now().uptimeNanoseconds
        phases[keyPath: phase] += Double(now - last) / 1e9
        last = now
    }
}

/// The CPU time a bake used (user + system), split between its own process and its workers.
///
/// Next to the wall-clock ``BakeSummary/seconds`` it says how busy the cores were; the bake's
/// own share is the part no number of workers spreads (planning, placing and publishing).
public struct BakeCPU: Sendable, Equatable, Encodable {
    /// The bake's own process, every thread.
    public var bake = 0.0
    /// Worker processes, once they have exited.
    public var workers = 0.0

    /// No time yet.
    public init() {}

    /// The CPU time this process and its exited children have used since `start` (a ``now()``).
    static func since(_ start: BakeCPU) -> BakeCPU {
        let now = now()
        var cpu = BakeCPU()
        cpu.bake = now.bake - start.bake
        cpu.workers = now.workers - start.workers
        return cpu
    }

    /// This process's and its exited children's CPU time so far.
    static func now() -> BakeCPU {
        func seconds(_ who: Int32) -> Double {
            var usage = rusage()
            getrusage(who, &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        // Glibc imports the two as an enumeration's cases, Darwin as plain integers.
        #if canImport(Darwin)
        let (own, children) = (RUSAGE_SELF, RUSAGE_CHILDREN)
        #else
        let (own, children) = (RUSAGE_SELF.rawValue, RUSAGE_CHILDREN.rawValue)
        #endif
        var cpu = BakeCPU()
        cpu.bake = seconds(Int32(own))
        cpu.workers = seconds(Int32(children))
        return cpu
    }
}

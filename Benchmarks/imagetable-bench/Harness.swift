import CMallocCounter
import Foundation

/// Timing and reporting helpers shared by the benchmarks. Figures are printed as ratios against
/// a baseline measured in the same process, never compared with absolute thresholds.
enum Harness {
    /// Seconds elapsed running `body` once (monotonic clock).
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The fastest of `runs` timings: the least disturbed by other load on a shared machine.
    static func best(of runs: Int, _ body: () throws -> Void) rethrows -> Double {
        var fastest = Double.infinity
        for _ in 0..<runs { fastest = min(fastest, try time(body)) }
        return fastest
    }

    /// Allocations made while running `body`.
    static func allocations(_ body: () throws -> Void) rethrows -> UInt64 {
        let before = malloc_counter_calls()
        try body()
        return malloc_counter_calls() - before
    }

    /// Prints one aligned result line.
    static func report(_ name: String, _ value: String, _ note: String = "") {
        let padded = name.padding(toLength: 46, withPad: " ", startingAt: 0)
        print("  \(padded) \(value.padding(toLength: 18, withPad: " ", startingAt: 0)) \(note)")
    }

    /// `1,234,567` style.
    static func grouped(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value)) ?? "\(Int(value))"
    }

    /// A scratch directory under the package's `bench-out/bench/`, emptied first.
    static func scratch(_ name: String) -> String {
        let path = scratchRoot + "/\(name)"
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes every scratch directory this process made.
    static func removeScratch() { try? FileManager.default.removeItem(atPath: scratchRoot) }

    private static var scratchRoot: String { FileManager.default.currentDirectoryPath + "/bench-out/bench" }
}

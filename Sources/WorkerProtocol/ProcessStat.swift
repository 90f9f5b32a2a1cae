import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What Linux's `/proc/PID/stat` says of a process: its state, the CPU it has spent and when it
/// started. A worker's CPU tells a source that decodes past its timeout from a stalled read; a
/// process's state and start time tell a killed `merge` or `export` (a zombie its parent has
/// not reaped, or a PID given since to another process) from one still writing its staging
/// directory.
package struct ProcessStat: Sendable {
    /// The state letter: `R` running, `S` sleeping, `Z` a zombie, `X` dead…
    package let state: Character
    /// User and system CPU time, in seconds.
    package let cpuSeconds: Double
    /// When the process started, in clock ticks since the system booted: with the PID, it names
    /// one process for the life of the system.
    package let startTicks: UInt64

    /// The process `pid`'s line, or `nil` where there is none (gone, or not Linux).
    ///
    /// - Parameter pid: the process.
    package init?(pid: Int32) {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command's name (which may hold spaces and parentheses): state is field 3,
        // utime 14, stime 15, starttime 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let state = fields[0].first, let user = Double(fields[11]), let system = Double(fields[12]),
              let start = UInt64(fields[19]) else { return nil }
        self.state = state
        cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        startTicks = start
        #else
        return nil
        #endif
    }
}

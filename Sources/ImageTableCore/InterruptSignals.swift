import CTableSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM as a request to stop at the next safe point, for a command that can stop
/// part-way and keep what it did (a bake).
///
/// A CI system cancels a job with SIGINT, then SIGTERM, then SIGKILL (GitHub Actions waits 7.5 s
/// between the first two); a bake killed at once leaves interrupted writes for the next bake and
/// prints no report, so `--format json` gave a pipeline nothing to read. While caught, the first
/// signal is only recorded; a second one ends the process at once (the same signal again within
/// 200 ms is the first sent twice: GNU `timeout` signals the command, then its process group).
public enum InterruptSignals {
    /// Catches SIGINT and SIGTERM from now on, but a signal ignored on entry (see ``caught``);
    /// forgets a signal caught before.
    public static func catchFromNow() { itc_catch_interrupts() }

    /// Puts back both signals' default action; one already caught stays in ``caught``.
    public static func release() { itc_release_interrupts() }

    /// The signal caught since ``catchFromNow()``, if any.
    public static var caught: Int32? {
        let signal = itc_interrupt_signal()
        return signal == 0 ? nil : signal
    }

    /// Ends the process by `signal`'s default action: a shell then sees the command killed by
    /// the signal and stops the script that ran it (`for m in *.yaml; do imagetable bake "$m";
    /// done` stops at the first Ctrl-C), where an exit status of 130 let the script go on. Also
    /// how a tool ends as a filter does when its reader goes (SIGPIPE).
    ///
    /// - Parameter signal: the signal to end by.
    public static func end(by signal: Int32) -> Never {
        itc_end_by_signal(signal)
        exit(128 + signal)  // not reached: the default action ends the process
    }

    /// `SIGINT`, `SIGTERM`, or `signal N`.
    ///
    /// - Parameter signal: a signal number.
    public static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(signal)"
        }
    }
}

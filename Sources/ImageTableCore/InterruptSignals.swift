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
/// signal is only recorded; a second one ends the process at once.
public enum InterruptSignals {
    /// Catches SIGINT and SIGTERM from now on (see ``caught``).
    public static func catchFromNow() { itc_catch_interrupts() }

    /// Puts back both signals' default action; one already caught stays in ``caught``.
    public static func release() { itc_release_interrupts() }

    /// The signal caught since ``catchFromNow()``, if any.
    public static var caught: Int32? {
        let signal = itc_interrupt_signal()
        return signal == 0 ? nil : signal
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

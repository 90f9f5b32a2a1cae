import CTableSupport
import Foundation

/// Whether what a tool printed reached its standard output.
///
/// `print` writes into the C library's buffer for standard output, and a failed write there
/// (a full disk, `> /dev/full`, an I/O error) only sets the stream's error flag: a tool that
/// exits without asking exits 0 with its JSON report empty or cut short, and a CI step that
/// reads it fails later, or not at all. Every executable flushes through here before it
/// exits, as `cat` and the coreutils do.
public enum StandardOutputFlush {
    /// What became of everything written to standard output.
    public enum Outcome: Equatable, Sendable {
        /// All of it was handed to the file or pipe.
        case written
        /// The pipe's reader went away (`EPIPE`, with `SIGPIPE` ignored): a filter's reader
        /// that stopped early (`| head`), which a tool ends on silently.
        case readerGone
        /// A write failed; `reason` is the system's message.
        case failed(reason: String)
    }

    /// The reason of the first failed flush, kept for ``finish(status:)``: the stream's error
    /// flag outlives a failed flush, its error number does not.
    private static let firstFailure = AdaptiveMutex<String?>(nil)

    /// Flushes standard output and says whether any write to it failed, this one or an
    /// earlier one.
    public static func flush() -> Outcome {
        switch itc_flush_stdout() {
        case 0: return .written
        case EPIPE: return .readerGone
        // An earlier write failed and its error number is gone: say so rather than guess.
        case -1: return .failed(reason: firstFailure.withLock { $0 } ?? "an earlier write failed")
        case let code:
            let reason = String(cString: strerror(code))
            firstFailure.withLock { $0 = $0 ?? reason }
            return .failed(reason: reason)
        }
    }

    /// Keeps the reason of a write to standard output that just failed, for
    /// ``finish(status:)``: the C library keeps only a flag, and the error number is lost by
    /// the time of the final flush. A reader that went ends the process as
    /// ``endAsAClosedPipeDoes()`` does.
    ///
    /// - Parameter code: `errno` right after the write (0 before it).
    public static func noteFailure(errno code: Int32) {
        guard code != 0, itc_stdout_failed() != 0 else { return }
        if code == EPIPE { endAsAClosedPipeDoes() }
        let reason = String(cString: strerror(code))
        firstFailure.withLock { $0 = $0 ?? reason }
    }

    /// Flushes what was printed to standard output before a line goes to standard error, so
    /// that the two keep their order where they are one file (`> out.txt 2>&1`): a listing
    /// written to a file is flushed in blocks of 4 KiB, and its totals, written to standard
    /// error after it, landed inside one of its lines. Ends the process as
    /// ``endAsAClosedPipeDoes()`` when the reader is gone; a failed write is reported by
    /// ``finish(status:)``.
    public static func flushBeforeStandardError() {
        if case .readerGone = flush() { endAsAClosedPipeDoes() }
    }

    /// Ends the process as a filter ends when the reader of its output goes: by `SIGPIPE`,
    /// silently, so the shell sees status 141 as it does for `cat`.
    public static func endAsAClosedPipeDoes() -> Never {
        InterruptSignals.end(by: SIGPIPE)
    }

    /// The exit status a tool ends with after flushing: `status`, or 1 where every write
    /// seemed to succeed but standard output lost some of it. Reports the loss on standard
    /// error as `<stdout>: error: cannot write to standard output: … [output-failed]`; ends the
    /// process by `SIGPIPE` when the reader is gone.
    ///
    /// - Parameter status: the status the tool was about to exit with.
    public static func finish(status: Int32) -> Int32 {
        switch flush() {
        case .written:
            return status
        case .readerGone:
            endAsAClosedPipeDoes()
        case .failed(let reason):
            let error = ImageTableError(.outputFailed, "cannot write to standard output: \(reason); what it printed is incomplete",
                                        path: "<stdout>")
            SystemIO.writeStandardError(PrintableText.line(error.description) + "\n")
            return status == 0 ? 1 : status
        }
    }
}

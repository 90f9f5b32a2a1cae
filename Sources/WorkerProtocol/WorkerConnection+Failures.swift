import Foundation

// A worker connection's failures, in a file of their own: what callers switch over and print.
extension WorkerConnection {
    /// Why a worker stopped being usable.
    public enum Loss: Error, Sendable, Equatable, CustomStringConvertible {
        /// It exited on its own (a status) or was killed by a signal (a decoder crash).
        case died(status: Int32, signal: Int32?)
        /// It did not answer within the timeout; it has been killed.
        case timedOut(seconds: Double)
        /// It answered with a line that is not a reply, or the reply to another request; it has
        /// been killed.
        case brokeProtocol(String)

        /// A sentence for people.
        public var description: String {
            switch self {
            case .died(_, let signal?): "the worker was killed by signal \(signal)"
            case .died(let status, nil): "the worker exited with status \(status)"
            case .timedOut(let seconds): "the worker did not answer within \(Self.seconds(seconds)); it was stopped"
            case .brokeProtocol(let what): "the worker broke the protocol: \(what); it was stopped"
            }
        }

        /// A duration as messages write it: `120 s`, `2.5 s`, `0.001 s` (a timeout under a tenth
        /// of a second read `0.0 s`).
        ///
        /// - Parameter s: seconds, finite and not negative.
        /// - Returns: the seconds and their unit.
        public static func seconds(_ s: Double) -> String {
            s == s.rounded() && s < 1e15 ? "\(Int(s)) s" : String(format: "%g s", s)
        }
    }

    /// Why a worker could not be started.
    public enum StartFailure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The executable is missing or cannot be run.
        case cannotRun(executable: String, reason: String)
        /// It runs, but speaks another protocol or rendering version.
        case mismatch(ours: Hello, theirs: Hello)
        /// It did not complete the handshake.
        case noHandshake(executable: String, Loss)

        /// A sentence for people, naming the worker's path and what to do.
        public var description: String {
            switch self {
            case .cannotRun(let executable, let reason):
                "cannot run the worker \(executable): \(reason); imagetable-worker must be installed next to imagetable"
            case .mismatch(let ours, let theirs):
                "the worker \(theirs.executable) speaks protocol \(theirs.protocolVersion) and renders version "
                    + "\(theirs.renderingVersion), but \(ours.executable) speaks protocol \(ours.protocolVersion) and renders "
                    + "version \(ours.renderingVersion); install imagetable and imagetable-worker from the same build"
            case .noHandshake(let executable, let loss):
                "the worker \(executable) did not answer the handshake: \(loss)"
            }
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The worker's side of the channel: the handshake, then one reply per request until the
/// command closes its end.
///
/// The worker also exits, at once and from any state, when its command dies: a thread waits on
/// the lifeline (``WorkerDescriptors/lifeline``), whose write end only the command holds, and
/// reads end of file when the command is gone, however it went (`kill -9` included). A worker
/// outliving a killed bake could otherwise still be writing a slot that the next bake reserves
/// again. On Linux the kernel's parent-death signal does the same; this works everywhere.
public enum WorkerEndpoint {
    /// Why the endpoint could not serve.
    public enum Failure: Error, Equatable {
        /// The descriptors of ``WorkerDescriptors`` are not open: not started by a command.
        case notStartedByACommand
        /// The command's versions differ from ours (we answered with ours and stopped).
        case mismatch(theirs: Hello)
        /// A request line could not be read, or the reply could not be written.
        case brokenChannel
    }

    /// Whether this process was started with the protocol's descriptors.
    public static var isConnected: Bool {
        fcntl(WorkerDescriptors.requests, F_GETFD) >= 0 && fcntl(WorkerDescriptors.replies, F_GETFD) >= 0
    }

    /// Serves requests until the command closes the channel.
    ///
    /// - Parameters:
    ///   - hello: this worker's greeting (its versions and executable).
    ///   - greeted: takes the command's greeting once its versions matched, before any other
    ///     request (a bake's carries the tables its render jobs name by position).
    ///   - handle: answers one request (never a handshake); runs on the calling thread.
    /// - Throws: ``Failure``; returns normally at the end of the requests.
    public static func serve(_ hello: Hello, greeted: (Hello) -> Void = { _ in },
                             handle: (WorkerRequest) -> WorkerReply) throws(Failure) {
        guard isConnected else { throw .notStartedByACommand }
        watchLifeline()
        let lines = LineReader(fd: WorkerDescriptors.requests)
        var wasGreeted = false
        while case .line(let line) = lines.next(timeout: nil) {
            guard let (id, request) = WireCodec.request(line) else { throw .brokenChannel }
            let reply: WorkerReply
            switch request {
            case .hello(let theirs):
                reply = .hello(hello)
                guard DescriptorWriter.writeAll(WorkerDescriptors.replies, WireCodec.line(reply, id: id)) else { throw .brokenChannel }
                guard theirs.protocolVersion == hello.protocolVersion, theirs.renderingVersion == hello.renderingVersion else {
                    throw .mismatch(theirs: theirs)
                }
                greeted(theirs)
                wasGreeted = true
                continue
            default:
                reply = wasGreeted ? handle(request)
                    : .failed(WorkerFailure(.protocolError, "the first request must be the handshake"))
            }
            guard DescriptorWriter.writeAll(WorkerDescriptors.replies, WireCodec.line(reply, id: id)) else { throw .brokenChannel }
        }
    }

    /// Starts the thread that ends the process when the command is gone.
    private static func watchLifeline() {
        guard fcntl(WorkerDescriptors.lifeline, F_GETFD) >= 0 else { return }
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(WorkerDescriptors.lifeline, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                // End of file (or an error): the command is gone; so are we, without cleanup that
                // could block.
                _exit(2)
            }
        }
        thread.name = "lifeline"
        thread.stackSize = 64 << 10
        thread.start()
    }
}

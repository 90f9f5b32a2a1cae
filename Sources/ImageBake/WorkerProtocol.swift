import Foundation
import ImagePipeline
import ImageTableCore

/// The messages between the bake and its worker processes: one JSON object per line.
///
/// The bake (which holds every table's writer lock) reserves slots and sends a job naming them;
/// the worker decodes the source once, renders every member straight into its slot through
/// ``DelegatedSlots``, and replies with the content rectangles. The bake then publishes. A
/// worker never commits anything, so a worker that crashes on a hostile file costs only that
/// source: the bake abandons its reservations and starts a new worker.
enum WorkerProtocol {
    /// One slot to fill.
    struct Member: Codable, Sendable {
        /// The table file.
        var table: String
        /// Its parameter hash, hex: the worker refuses a table rebuilt since.
        var parametersHash: String
        /// The reserved slot and its reservation generation.
        var slot: Int
        var generation: UInt64
        /// How to render it.
        var spec: MemberSpec
    }

    /// One source to decode into several slots.
    struct Job: Codable, Sendable {
        var id: Int
        var source: String
        var members: [Member]
    }

    /// Why a job failed.
    struct Failure: Codable, Sendable, Equatable {
        /// A ``PipelineError/Code`` raw value, or `worker-crashed` / `table-changed`.
        var code: String
        var message: String
        var cause: String?
    }

    /// The answer to a job.
    struct Reply: Codable, Sendable {
        var id: Int
        /// One per member, in order, on success.
        var rects: [PixelRect]?
        /// Decodes the job cost (1 on success: the whole family from one decode).
        var decodes: Int
        var failure: Failure?
    }

    static func encodeLine<T: Encodable>(_ value: T) throws -> Data {
        var data = try JSONEncoder().encode(value)
        data.append(0x0A)
        return data
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = hex.makeIterator()
        while let a = chars.next(), let b = chars.next(), let v = UInt8(String([a, b]), radix: 16) { out.append(v) }
        return out
    }
}

/// Reads `\n`-terminated lines from a file descriptor, optionally with a deadline.
final class LineReader {
    enum Result {
        case line(Data)
        case end
        case timedOut
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// The pipes whose file handles own `fd`; kept so the descriptor stays open.
    private let owners: [Pipe]

    init(fd: Int32, pipesToKeepAlive: [Pipe] = []) {
        self.fd = fd
        owners = pipesToKeepAlive
    }

    /// The next line without its terminator, or `nil` at end of file.
    func next() -> Data? {
        if case .line(let data) = next(timeout: nil) { return data }
        return nil
    }

    /// The next line, waiting at most `timeout` seconds (forever when `nil`).
    func next(timeout: Double?) -> Result {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = Data(buffer[start..<newline])
                start = newline + 1
                if start > 1 << 16 {
                    buffer.removeFirst(start)
                    start = 0
                }
                return .line(line)
            }
            if let deadline {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return .timedOut }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, Int32(min(remaining, 3600) * 1000) + 1)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { return .timedOut }
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return .end }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}

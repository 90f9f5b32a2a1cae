import Foundation
import ImageTableCore

/// The messages between the bake and its worker processes (`imagetable-worker bake`): one JSON
/// object per line, one reply per request.
///
/// The bake holds every table's writer lock. For each source it reserves a slot in each table
/// that needs the source, without evicting anything, and sends a ``Request`` whose ``Job``
/// names them; the worker decodes the source once and renders every member straight into its
/// slot through ``DelegatedSlots``. A member whose table is full has no slot yet: the worker
/// renders it into a buffer of its own and keeps it. Only once the source has decoded does the
/// bake evict to make room and send a second request that places the held buffers into the new
/// slots, so a bad source never costs a good entry its place. The worker never commits; the bake
/// publishes. A worker that crashes on a hostile file costs only that source.
public enum WorkerProtocol {
    /// A reserved slot to render into.
    public struct SlotTarget: Codable, Sendable {
        /// The table file.
        public var table: String
        /// Its parameter hash, hex: the worker refuses a table rebuilt since.
        public var parametersHash: String
        /// The reserved slot.
        public var slot: Int
        /// The reservation's generation, which the worker checks before writing.
        public var generation: UInt64

        /// Creates a target.
        ///
        /// - Parameters:
        ///   - table: the table file.
        ///   - parametersHash: its parameter hash, hex.
        ///   - slot: the reserved slot.
        ///   - generation: the reservation's generation.
        public init(table: String, parametersHash: String, slot: Int, generation: UInt64) {
            self.table = table
            self.parametersHash = parametersHash
            self.slot = slot
            self.generation = generation
        }
    }

    /// One format to render a source in.
    public struct Member: Codable, Sendable {
        /// How to render it: the format's canonical parameter string (``TableFormat/canonicalParameters``).
        public var format: String
        /// Where: a reserved slot, or `nil` to render into a buffer the worker holds until a
        /// ``Request/place`` request.
        public var target: SlotTarget?

        /// Creates a member.
        ///
        /// - Parameters:
        ///   - format: how to render it.
        ///   - target: its slot, or `nil` for a held buffer.
        public init(format: TableFormat, target: SlotTarget?) {
            self.format = format.canonicalParameters
            self.target = target
        }
    }

    /// One source to decode, once, into several members.
    public struct Job: Codable, Sendable {
        /// The source file.
        public var source: String
        /// The formats of the family that need it.
        public var members: [Member]

        /// Creates a job.
        ///
        /// - Parameters:
        ///   - source: the source file.
        ///   - members: the formats to render.
        public init(source: String, members: [Member]) {
            self.source = source
            self.members = members
        }
    }

    /// What the bake asks of a worker: render a job, or place the held buffers of the last job.
    public struct Request: Codable, Sendable {
        /// Matches the reply to the request.
        public var id: Int
        /// Decode and render.
        public var render: Job?
        /// Copy the held buffers of the last job, in member order, into these slots, then free
        /// them all; an empty list just frees them.
        public var place: [SlotTarget]?

        /// Creates a request.
        ///
        /// - Parameters:
        ///   - id: the request's id.
        ///   - render: a job to run.
        ///   - place: slots for the held buffers.
        public init(id: Int, render: Job? = nil, place: [SlotTarget]? = nil) {
            self.id = id
            self.render = render
            self.place = place
        }
    }

    /// Why a job failed.
    public struct Failure: Codable, Sendable, Equatable {
        /// A pipeline error code (`truncated`, `too-many-pixels`…), or `worker-crashed`,
        /// `timed-out`, `table-changed`.
        public var code: String
        /// A sentence for people.
        public var message: String
        /// libvips' own words, when it said anything.
        public var cause: String?

        /// Creates a failure.
        ///
        /// - Parameters:
        ///   - code: the stable code.
        ///   - message: a sentence for people.
        ///   - cause: the underlying library's text.
        public init(code: String, message: String, cause: String?) {
            self.code = code
            self.message = message
            self.cause = cause
        }
    }

    /// The answer to a job.
    public struct Reply: Codable, Sendable {
        /// The job's id.
        public var id: Int
        /// One per member, in order, on success.
        public var rects: [PixelRect]?
        /// Decodes the job cost (1 on success: the whole family from one decode).
        public var decodes: Int
        /// Why it failed, when it did.
        public var failure: Failure?

        /// Creates a reply.
        ///
        /// - Parameters:
        ///   - id: the job's id.
        ///   - rects: the content rectangles, on success.
        ///   - decodes: decodes the job cost.
        ///   - failure: why it failed.
        public init(id: Int, rects: [PixelRect]?, decodes: Int, failure: Failure?) {
            self.id = id
            self.rects = rects
            self.decodes = decodes
            self.failure = failure
        }
    }

    /// A value as one JSON line.
    ///
    /// - Parameter value: the message.
    /// - Throws: what `JSONEncoder` throws.
    public static func encodeLine<T: Encodable>(_ value: T) throws -> Data {
        var data = try JSONEncoder().encode(value)
        data.append(0x0A)
        return data
    }

    /// Lower-case hex of bytes (parameter hashes travel as text).
    ///
    /// - Parameter bytes: the bytes.
    public static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The bytes of a hex string; stops at the first invalid pair.
    ///
    /// - Parameter hex: the text.
    public static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = hex.makeIterator()
        while let a = chars.next(), let b = chars.next(), let v = UInt8(String([a, b]), radix: 16) { out.append(v) }
        return out
    }
}

/// Reads `\n`-terminated lines from a file descriptor, optionally with a deadline.
public final class LineReader {
    /// What waiting for a line produced.
    public enum Result {
        /// A line, without its terminator.
        case line(Data)
        /// The other end closed.
        case end
        /// The deadline passed first.
        case timedOut
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Reused for every read: one per reply would allocate and zero 64 KiB each time.
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    /// Reads from `fd`, which the caller keeps open for as long as the reader is used.
    ///
    /// - Parameter fd: the descriptor.
    public init(fd: Int32) {
        self.fd = fd
    }

    /// The next line without its terminator, or `nil` at end of file.
    public func next() -> Data? {
        if case .line(let data) = next(timeout: nil) { return data }
        return nil
    }

    /// The next line, waiting at most `timeout` seconds (forever when `nil`).
    ///
    /// - Parameter timeout: seconds to wait, or `nil` for no limit.
    public func next(timeout: Double?) -> Result {
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
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return .end }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Raw file descriptor writes that report failure instead of raising SIGPIPE or trapping.
public enum FileDescriptor {
    /// Writes all of `data`; `false` when the other end is gone or the write fails.
    ///
    /// - Parameters:
    ///   - fd: the descriptor.
    ///   - data: the bytes.
    public static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += n
            }
            return true
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// The longest line accepted; a longer one ends the channel (a peer that is not speaking the
    /// protocol must not make us buffer without bound).
    public static let maxLineBytes = 1 << 24

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
            guard buffer.count - start <= Self.maxLineBytes else { return .end }
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
public enum DescriptorWriter {
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

import Foundation

/// What a program did: its exit status and both output streams.
public struct ProcessResult: Sendable {
    /// The exit status, or the signal number when it was killed.
    public let status: Int32
    /// Whether it exited rather than being killed by a signal.
    public let exited: Bool
    /// Standard output as bytes (PNGs may go there).
    public let output: Data
    /// Standard error.
    public let stderr: String

    /// Standard output as text.
    public var stdout: String { String(decoding: output, as: UTF8.self) }
}

/// Runs `program` to completion and captures both streams.
///
/// Standard error is drained on another thread while standard output is read, so a child that
/// writes a lot to either can never block on a full pipe while the test waits on the other.
///
/// - Parameters:
///   - program: the executable.
///   - arguments: its arguments.
///   - directory: its working directory; the test's when `nil`.
///   - environment: variables to add to the test's environment.
/// - Returns: the status and output.
/// - Throws: what `Process.run` throws when the program cannot start.
public func run(_ program: String, _ arguments: [String], in directory: String? = nil,
                environment: [String: String] = [:]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let errorText = ErrorDrain(err.fileHandleForReading)
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, exited: process.terminationReason == .exit,
                         output: output, stderr: errorText.finish())
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorDrain: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func finish() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// Writes `text` to `path` as an executable (a script for a test to run, or to have a bake run).
///
/// The file is written through a close-on-exec descriptor: a worker that another test's bake
/// spawns meanwhile inherits every descriptor that is not, and while it holds one open for
/// writing, running the file fails with "Text file busy" (`String.write(toFile:)` opens without
/// the flag).
///
/// - Parameters:
///   - text: the file's contents.
///   - path: where to write it; replaced if it exists.
/// - Throws: `POSIXError` when it cannot be written.
public func writeExecutable(_ text: String, to path: String) throws {
    unlink(path)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 || (n < 0 && errno == EINTR) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        written += max(n, 0)
    }
}

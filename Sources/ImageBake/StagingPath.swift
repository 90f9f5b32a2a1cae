import Foundation
import ImageTableCore
import WorkerProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `export` and `merge` write into a staging directory beside their output and rename it into
// place: an error about a file in it names the file where it was going.
extension ImageTableError {
    /// This error, naming a file of `staging` by its place in `destination`: the staging
    /// directory is gone by the time the error is reported, and its name means nothing to people.
    ///
    /// - Parameters:
    ///   - staging: the staging directory.
    ///   - destination: the output as the user gave it.
    /// - Returns: the error at its destination path, or unchanged when it is not about a file of
    ///   `staging`.
    func relocated(from staging: String, to destination: String) -> ImageTableError {
        guard let path, let rest = PathBytes.remainder(path, after: staging + "/") else { return self }
        let shown = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        return at(shown + "/" + rest)
    }
}

/// The run that made a staging directory, as the directory's name after its prefix says:
/// `PID-START-RANDOM`, where START is when that process started (0 where the system does not
/// say), so that a later run can tell a directory still being written from one a killed run left.
///
/// The PID alone did not tell: a killed run whose parent has not reaped it yet (a zombie) still
/// answers `kill(pid, 0)`, and so does any process given its PID since; either kept a staging
/// directory, as large as a whole set of tables, past every later run.
enum StagingOwner {
    /// This process's part of a staging name, before the random part: `PID-START`.
    static let current = "\(getpid())-\(ProcessStat(pid: getpid())?.startTicks ?? 0)"

    /// Whether the run that named a staging directory `owner` (its name after the prefix) may
    /// still be writing there. An older build's `PID-RANDOM` is judged by its PID; a name that
    /// does not start with a PID is kept, since nothing says whose it is.
    ///
    /// - Parameter owner: the name after the staging prefix.
    static func mayBeWriting(_ owner: Substring) -> Bool {
        let fields = owner.split(separator: "-", omittingEmptySubsequences: false)
        guard let pid = fields.first.flatMap({ pid_t($0) }), pid > 0 else { return true }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let stat = ProcessStat(pid: pid) else { return true }
        if stat.state == "Z" || stat.state == "X" { return false }
        if fields.count >= 3, let started = UInt64(fields[1]), started != 0, started != stat.startTicks { return false }
        return true
    }
}

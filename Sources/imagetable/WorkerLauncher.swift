import ArgumentParser
import Foundation
import ImageTableCore

/// Hands a command's pixel work to `imagetable-worker`, the executable that links libvips.
///
/// `imagetable` execs the worker in its own place rather than running it as a child: the
/// worker's standard output, standard error and exit status are the command's, with nothing to
/// forward, and signals such as Ctrl-C reach it directly.
enum WorkerLauncher {
    /// Replaces this process with `imagetable-worker ARGUMENTS`. Returns only by throwing, when
    /// the worker cannot be started (it is reported as `worker-unavailable`, exit 1).
    static func exec(_ arguments: [String]) throws -> Never {
        let path = BakeCommand.workerPath
        fflush(nil)  // every C stream: nothing printed so far may be lost by exec
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(path, &argv)
        let reason = String(cString: strerror(errno))
        StandardError.report(ImageTableError(.workerUnavailable, "cannot run imagetable-worker: \(reason); it must be installed next to imagetable",
                                             path: path))
        throw ExitStatus.failure
    }

    /// Opens `table` to report a missing, unreadable or damaged table here, with the same
    /// messages as `inspect`, before libvips is loaded for nothing.
    static func checkTable(_ table: String) throws {
        do {
            _ = try TableOpener.open(table)
        } catch {
            StandardError.report(error)
            throw ExitStatus.failure
        }
    }
}

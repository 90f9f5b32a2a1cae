import Foundation

/// Fault injection for the tests, at instants no timing can reach reliably: when the environment
/// variable `IMAGETABLE_TEST_HOOK` names an executable, the bake and its workers run it at each
/// named point and wait for it, with the point's name, the process id and the file concerned as
/// arguments (a test's hook may kill the process there, or replace, truncate or delete the file).
/// Unset, which is every real run, a point costs one comparison.
///
/// Points (`docs/BAKE.md`, "For tests: the hook"): `source-opened` (a source is open and stat'ed,
/// not yet read), `source-read` (its bytes are read and its stat checked, not yet decoded),
/// `planned` (the bake has its plan and has touched no table), `state-commit` (inside the bake
/// state's transaction, before its commit); in every writer, `index-rebuilt` (a rebuilt hash
/// index area is written, not yet switched to) and `index-switched` (switched to, the header not
/// yet flushed).
public enum TestHook {
    private static let executable = ProcessInfo.processInfo.environment["IMAGETABLE_TEST_HOOK"]

    /// Runs the hook for `point`, if there is one.
    ///
    /// - Parameters:
    ///   - point: the point's name.
    ///   - path: the file concerned, if any.
    public static func run(_ point: String, path: String = "") {
        guard let executable else { return }
        // A hook the test has just written may not start at once: another test's process forked
        // meanwhile can hold the file open for writing (ETXTBSY). A hook that silently did not
        // run made a fault-injection test pass or fail by chance, so it is tried again, and a
        // hook that never starts is said on standard error.
        for attempt in 0..<100 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [point, "\(getpid())", path]
            do {
                try process.run()
            } catch {
                if attempt == 99 { SystemIO.writeStandardError("test hook \(executable) did not start: \(error)\n") }
                usleep(10_000)
                continue
            }
            process.waitUntilExit()
            return
        }
    }
}

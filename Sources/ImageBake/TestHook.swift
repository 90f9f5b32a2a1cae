import Foundation

/// Fault injection for the tests, at points no timing can reach reliably: when the environment
/// variable `IMAGETABLE_TEST_HOOK` names an executable, a bake runs it at each named point and
/// waits for it, with the point's name and the bake's process id as arguments (a test's hook may
/// kill the bake there, or change a file). Unset, which is every real run, it costs one lookup.
///
/// Points: `state-commit`, inside the bake state's transaction, after its rows are written and
/// before the commit.
enum TestHook {
    private static let executable = ProcessInfo.processInfo.environment["IMAGETABLE_TEST_HOOK"]

    /// Runs the hook for `point`, if there is one.
    static func run(_ point: String) {
        guard let executable else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [point, "\(getpid())"]
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}

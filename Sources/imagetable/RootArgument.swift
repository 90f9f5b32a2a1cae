import ArgumentParser
import Foundation

/// `--root DIR` of `validate`, `bake` and `export`, checked before any manifest is read.
///
/// A root that does not exist, or is a file, made every path of every manifest fail as
/// "outside the root", one error per path, where the mistake is the option's.
enum RootArgument {
    /// Checks that `root`, when given, is a directory.
    ///
    /// - Parameter root: the option's value, or `nil` when it was not given.
    /// - Throws: a `ValidationError` (bad usage, exit 64) saying what `root` is instead.
    static func check(_ root: String?) throws {
        guard let root else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
            throw ValidationError("--root \(root): no such directory.")
        }
        guard isDirectory.boolValue else { throw ValidationError("--root \(root) is not a directory.") }
    }
}

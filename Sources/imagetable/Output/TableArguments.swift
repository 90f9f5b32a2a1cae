import ArgumentParser

/// The table paths a command was given, as a shell glob over an output directory gives them.
///
/// `imagetable verify tables/*` also names each table's writer lock (`T.imagetable.lock`, an
/// empty file a bake keeps beside it), which is not a table: reporting those as broken tables
/// would make the obvious command fail. A lock file is dropped when its table is named too; one
/// named alone is still reported for what it is.
enum TableArguments {
    /// `paths` without the lock files of tables that are also in `paths`, in their order.
    ///
    /// - Parameter paths: the command's table arguments.
    static func withoutLockFiles(_ paths: [String]) -> [String] {
        let named = Set(paths)
        return paths.filter { path in
            guard path.hasSuffix(".imagetable.lock") else { return true }
            return !named.contains(String(path.dropLast(".lock".count)))
        }
    }

    /// Refuses an empty table path (an unset variable, `verify "$T"`), which was reported as
    /// `: error: no such file` with no path at all.
    ///
    /// - Parameter paths: the command's table arguments.
    /// - Throws: a `ValidationError` (exit 64).
    static func refuseEmpty(_ paths: [String]) throws {
        guard !paths.contains("") else { throw ValidationError("a table's path is empty: name the table file.") }
    }
}

import CTableSupport

/// Replacing a directory in one step, for tools that write a new set of tables beside an old
/// one (`imagetable merge`): whoever looks sees the old set or the new one, never a mix.
public enum AtomicRename {
    /// Swaps two existing paths atomically (Linux `renameat2(RENAME_EXCHANGE)`, macOS
    /// `renamex_np(RENAME_SWAP)`): afterwards `from` names what `to` named, and the reverse.
    ///
    /// - Parameters:
    ///   - from: one path.
    ///   - to: the other, in the same file system.
    /// - Throws: ``ImageTableError`` (`io`, …) when the system cannot swap them.
    public static func exchange(_ from: String, _ to: String) throws(ImageTableError) {
        let result = itc_exchange(from, to)
        guard result == 0 else { throw ImageTableError.system("renameat2 (exchange)", path: to, errno: result) }
    }
}

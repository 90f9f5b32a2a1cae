/// What to tell a user who asked a table for a key it does not hold.
extension ImageTableReader {
    /// The `no-such-key` error for `key`: where to look, and the key meant when `nearest` finds
    /// one among the table's keys.
    ///
    /// A write a stopped bake left unfinished holds no key yet (a record gets its key when it is
    /// committed), so it may have been this entry: then the advice is to bake again. Listing the
    /// table to find out costs what its entries do, which is paid only on this error.
    ///
    /// - Parameters:
    ///   - key: the key asked for.
    ///   - path: the table's path, as the user gave it.
    ///   - nearest: picks the key most likely meant from the table's keys, or `nil`; the core
    ///     has no spelling rules of its own.
    /// - Returns: the error, `path: error: no entry has the key 'k'; … [no-such-key]`, or
    ///   `damaged-record`/`damaged-index` when a record the table does not serve names the key.
    public func missingKeyError(_ key: String, path: String, nearest: ((_ keys: [String]) -> String?)? = nil) -> ImageTableError {
        let listed = entries()
        // The table holds the key, in a record it does not serve: "no entry" and a guess at
        // another key sent people looking for a typo.
        if let damaged = notices.first(where: { $0.key == key && $0.skipsEntry }) {
            return ImageTableError(damaged.kind == .damagedIndex ? .damagedIndex : .damagedRecord,
                                   "the entry for \(PrintableText.quoted(key)) is not served (\(damaged.located())); "
                                   + "`imagetable verify` lists the damage, and a bake renders the entry again", path: path)
        }
        let unfinished = notices.count { $0.kind == .discardedInterruptedWrite }
        let why: String
        if unfinished > 0 {
            // No guess then: the key asked for may well be the unfinished write's.
            let writes = unfinished == 1 ? "1 write" : "\(unfinished) writes"
            why = "the table has \(writes) that a stopped bake left unfinished (`imagetable verify` lists them), "
                + "which may have been it: bake again"
        } else if let meant = nearest?(listed.map(\.key)) {
            why = "did you mean \(PrintableText.quoted(meant))? (`imagetable inspect` lists the keys)"
        } else {
            why = "`imagetable inspect` lists the keys"
        }
        return ImageTableError(.noSuchKey, "no entry has the key \(PrintableText.quoted(key)); " + why, path: path)
    }
}

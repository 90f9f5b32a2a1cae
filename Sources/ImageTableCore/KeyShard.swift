/// Which of `N` shards a key belongs to, so that every machine of a sharded bake agrees without
/// talking to the others: the first 8 bytes of the SHA-1 of the key's UTF-8 bytes in Unicode
/// normalization form C, read as a big-endian unsigned integer, modulo `N` (`docs/SCALE.md`).
/// In a shell, for a key in NFC (every ASCII key is): `printf %s "$key" | sha1sum | cut -c1-16`
/// gives those bytes in hexadecimal.
///
/// In NFC so that names that differ only in their normalization (`café` with U+00E9, and with
/// `e` and U+0301) fall in one shard, whose scan keeps one of them (`ambiguous-name`), as a bake
/// of every shard at once does; hashed as they are, each went to its own shard, both were baked,
/// and the merge kept one.
public enum KeyShard {
    /// The shard of `key` among `count`.
    ///
    /// - Parameters:
    ///   - key: the source's key (its path relative to the family's sources, `/`-separated).
    ///   - count: the number of shards, at least 1.
    /// - Returns: `0 ..< count`.
    public static func shard(of key: String, count: Int) -> Int {
        precondition(count >= 1, "a shard count is at least 1")
        let digest = SHA1.digest(Array(KeyNormalization.nfc(key).utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % UInt64(count))
    }
}

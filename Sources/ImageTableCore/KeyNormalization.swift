import Foundation

/// Unicode normalization form C (NFC) of keys: what tells apart, and what joins, names that
/// differ only in how their characters are composed (`é` as U+00E9, or as `e` and U+0301).
///
/// A table identifies an entry by its key's bytes, while Swift compares strings by canonical
/// equivalence: the bake keeps one name of each such group (the one in NFC), and the shards of a
/// sharded bake are chosen by a key's NFC form, so that one shard sees the whole group.
public enum KeyNormalization {
    /// `key` in NFC; an ASCII key as it is.
    ///
    /// Foundation on Linux leaves some compositions undone when it composes a string directly:
    /// a Hangul syllable followed by a final consonant (U+AC00 U+11A8) stays so, where NFC is
    /// the one syllable U+AC01. Composing the canonical decomposition gives NFC as Python's
    /// `unicodedata` and ICU do.
    ///
    /// - Parameter key: a key or any string.
    /// - Returns: its NFC form.
    public static func nfc(_ key: String) -> String {
        if key.utf8.allSatisfy({ $0 < 0x80 }) { return key }
        return key.decomposedStringWithCanonicalMapping.precomposedStringWithCanonicalMapping
    }

    /// Whether `key`'s bytes are those of its NFC form.
    ///
    /// - Parameter key: a key or any string.
    public static func isNFC(_ key: String) -> Bool { nfc(key).utf8.elementsEqual(key.utf8) }
}

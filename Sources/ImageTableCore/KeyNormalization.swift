import Foundation

/// Unicode normalization form C (NFC) of keys: what tells apart, and what joins, names that
/// differ only in how their characters are composed (`é` as U+00E9, or as `e` and U+0301).
///
/// A table identifies an entry by its key's bytes, while Swift compares strings by canonical
/// equivalence: the bake keeps one name of each such group (the one in NFC), and the shards of a
/// sharded bake are chosen by a key's NFC form, so that one shard sees the whole group.
public enum KeyNormalization {
    /// `key` in NFC; a key of code points below U+0300 as it is.
    ///
    /// Foundation on Linux leaves some compositions undone when it composes a string directly:
    /// a Hangul syllable followed by a final consonant (U+AC00 U+11A8) stays so, where NFC is
    /// the one syllable U+AC01. Composing the canonical decomposition gives NFC as Python's
    /// `unicodedata` and ICU do.
    ///
    /// - Parameter key: a key or any string.
    /// - Returns: its NFC form.
    public static func nfc(_ key: String) -> String {
        // Below U+0300 (ASCII, Latin-1, the Latin extensions, IPA) nothing combines with what
        // precedes it and nothing decomposes other than to recompose the same: such a string is
        // its own NFC, with no Foundation call (4 µs a key, for every key of a sharded scan).
        if key.utf8.allSatisfy({ $0 < 0x80 }) || key.unicodeScalars.allSatisfy({ $0.value < 0x300 }) { return key }
        return key.decomposedStringWithCanonicalMapping.precomposedStringWithCanonicalMapping
    }

    /// Whether `key`'s bytes are those of its NFC form.
    ///
    /// - Parameter key: a key or any string.
    public static func isNFC(_ key: String) -> Bool { nfc(key).utf8.elementsEqual(key.utf8) }
}

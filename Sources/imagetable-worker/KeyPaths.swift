import ImageTableCore

/// The file names `imagetable extract --all DIR` gives entries: the key as a relative path, with
/// `.png` appended, made safe so that no key can name a file outside DIR.
///
/// The rules (docs/CLI.md, "extract"):
/// 1. The key is split at `/`. Empty components and `.` are dropped, so absolute keys and `//`
///    become relative.
/// 2. A `..` component becomes `%2E%2E`.
/// 3. In every component, `%`, control characters (U+0000–U+001F, U+007F) and `\` are
///    percent-encoded as their UTF-8 bytes (`%25`, `%0A`, `%5C`), so the mapping stays
///    one-to-one and names stay printable.
/// 4. A key with no components left (the empty key, `/`, `.`) becomes `%EMPTY`.
/// 5. `.png` is appended to the last component: `photos/cat.jpg` → `photos/cat.jpg.png`.
///    Appending rather than replacing the extension keeps `a.jpg` and `a.png` apart.
/// 6. When two entries still map to the same path (`a//b` and `a/b`), the later slot's file is
///    named with `~slotN` before `.png`, as is a file whose path another key needs as a
///    directory (``names(for:)``, which sees every key, decides).
enum KeyPaths {
    /// The relative path components for `key`, the last one ending in `.png`.
    static func components(for key: String) -> [String] {
        // Split at slash bytes, and `.` and `..` told by their bytes: `split(separator: "/")`
        // misses a slash that a combining mark follows (one Character), so the key
        // `../\u{301}x.jpg` was one component, never rewritten, and its file was written
        // above DIR.
        var parts = PathBytes.components(key).map(String.init).filter { !PathBytes.same($0, ".") }
        parts = parts.map { PathBytes.same($0, "..") ? "%2E%2E" : encode($0) }
        if parts.isEmpty { parts = ["%EMPTY"] }
        parts[parts.count - 1] += ".png"
        return parts
    }

    /// The components each entry is written to, in the order given (slot order), no two the
    /// same when case is folded (on a file system that folds case, as macOS's does, `A.jpg`
    /// and `a.jpg` would be one file), and none a directory another entry needs.
    ///
    /// Every entry whose plain name is free gets it first, the lowest slot winning a name two
    /// claim; only then do the others get `~slotN` names, which avoid every plain name: renaming
    /// one key never displaces another, whose key may itself read `x.jpg~slot0`.
    ///
    /// - Parameter entries: each entry's key and slot.
    /// - Returns: one path, as components, per entry.
    static func names(for entries: [(key: String, slot: Int)]) -> [[String]] {
        let plain = entries.map { components(for: $0.key) }
        func folded(_ parts: some Collection<String>) -> [String] { parts.map { $0.lowercased() } }
        let directories = Set(plain.flatMap { parts in (1..<parts.count).map { folded(parts[..<$0]) } })
        var taken = Set<[String]>()
        var names: [[String]?] = plain.map { parts in
            !directories.contains(folded(parts)) && taken.insert(folded(parts)).inserted ? parts : nil
        }
        for i in names.indices where names[i] == nil {
            var attempt = 1
            var parts = disambiguated(plain[i], slot: entries[i].slot, attempt: attempt)
            while directories.contains(folded(parts)) || !taken.insert(folded(parts)).inserted {
                attempt += 1
                parts = disambiguated(plain[i], slot: entries[i].slot, attempt: attempt)
            }
            names[i] = parts
        }
        return names.map { $0! }
    }

    /// Per entry, whether ``names(for:)`` renames it only for case: were names compared byte for
    /// byte, as a file system that keeps case apart compares them, no other key would need its
    /// plain name (`a.jpg` beside `A.jpg`, renamed for macOS's sake on Linux too).
    ///
    /// - Parameters:
    ///   - entries: each entry's key and slot, in the order given to ``names(for:)``.
    ///   - named: what ``names(for:)`` gave them.
    /// - Returns: one flag per entry; `false` for entries that keep their plain name.
    static func renamedForCaseOnly(_ entries: [(key: String, slot: Int)], named: [[String]]) -> [Bool] {
        let plain = entries.map { components(for: $0.key) }
        let directories = Set(plain.flatMap { parts in (1..<parts.count).map { Array(parts[..<$0]) } })
        var earlier = Set<[String]>()
        return plain.indices.map { i in
            defer { earlier.insert(plain[i]) }
            return named[i] != plain[i] && !directories.contains(plain[i]) && !earlier.contains(plain[i])
        }
    }

    /// `components` with `~slotN` inserted before the final `.png`, for a name already taken.
    static func disambiguated(_ components: [String], slot: Int, attempt: Int = 1) -> [String] {
        var parts = components
        let last = parts[parts.count - 1]
        // `~slotN` names the entry; should another key's name be that already, `~slotN-2`, `-3`…
        parts[parts.count - 1] = String(last.dropLast(4)) + "~slot\(slot)" + (attempt > 1 ? "-\(attempt)" : "") + ".png"
        return parts
    }

    private static func encode(_ component: String) -> String {
        var out = ""
        for scalar in component.unicodeScalars {
            if scalar == "%" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F {
                for byte in String(scalar).utf8 { out += "%" + hex(byte) }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

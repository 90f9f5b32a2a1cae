/// Paths split, compared and cut as the kernel reads them: as bytes, with `/` the only separator.
///
/// Swift's `String` works in Characters and compares by canonical equivalence. In Characters, a
/// `/` followed by a combining mark (U+0301) is one Character that is not `"/"`, so
/// `split(separator: "/")`, `lastIndex(of: "/")` and `hasPrefix(root + "/")` miss that slash;
/// and `é` written as one code point and as `e` with a combining accent, two files on Linux,
/// compare equal. Each test of what lies inside what, and of which file is which, goes through
/// here: through Characters, a merge deleted an input below its output, and a link from one
/// spelling of a directory into the other passed the outside-the-sources check.
package enum PathBytes {
    private static let slash = UInt8(ascii: "/")

    /// The names between `path`'s slashes, empty ones left out.
    ///
    /// - Parameter path: a path.
    /// - Returns: its names, each whole from the byte after a slash to the byte before the next.
    package static func components(_ path: some StringProtocol) -> [Substring] {
        parts(path).filter { !$0.isEmpty }
    }

    /// `path` split at every slash byte, empty parts kept (`a//b/` is `a`, ``, `b`, ``).
    package static func parts(_ path: some StringProtocol) -> [Substring] {
        let text = Substring(path)
        let bytes = text.utf8
        var parts: [Substring] = []
        var start = bytes.startIndex
        for i in bytes.indices where bytes[i] == slash {
            parts.append(text[start..<i])
            start = bytes.index(after: i)
        }
        parts.append(text[start...])
        return parts
    }

    /// Whether a name is hidden: its first byte is a dot (a dot and a combining mark are one
    /// Character, which `hasPrefix(".")` does not see).
    package static func isHidden(_ name: some StringProtocol) -> Bool { name.utf8.first == UInt8(ascii: ".") }

    /// Whether `path` begins with a slash byte: `"/\u{301}x".hasPrefix("/")` is false.
    package static func isAbsolute(_ path: some StringProtocol) -> Bool { path.utf8.first == slash }

    /// Whether `path` ends with a slash byte.
    package static func endsWithSlash(_ path: some StringProtocol) -> Bool { Substring(path).utf8.last == slash }

    /// Whether `a` and `b` are the same bytes.
    package static func same(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// What follows `prefix` in `path`, when `path` begins with `prefix`'s bytes; else `nil`.
    package static func remainder(_ path: String, after prefix: String) -> Substring? {
        guard path.utf8.starts(with: prefix.utf8) else { return nil }
        return path[path.utf8.index(path.utf8.startIndex, offsetBy: prefix.utf8.count)...]
    }

    /// Whether `path` lies below `directory`: begins with its bytes, then a slash. Every path but
    /// `/` lies below `/`.
    ///
    /// - Parameters:
    ///   - path: an absolute, normalised path.
    ///   - directory: an absolute, normalised directory, with no slash at its end unless it is `/`.
    package static func isBelow(_ path: String, _ directory: String) -> Bool {
        if directory == "/" { return path.utf8.count > 1 && path.utf8.first == slash }
        guard let rest = remainder(path, after: directory) else { return false }
        return rest.utf8.count > 1 && rest.utf8.first == slash
    }

    /// Whether `path` is `directory` or lies below it (``isBelow(_:_:)``).
    package static func isInside(_ path: String, _ directory: String) -> Bool {
        same(path, directory) || isBelow(path, directory)
    }

    /// `path` cut at its last slash: what comes before the slash, and the name after it; `nil`
    /// when it has no slash.
    package static func lastSlash(_ path: String) -> (directory: Substring, name: Substring)? {
        let bytes = path.utf8
        guard let slashIndex = bytes.lastIndex(of: slash) else { return nil }
        return (path[..<slashIndex], path[bytes.index(after: slashIndex)...])
    }

    /// `path` without the slashes at its end, but for a first one (`/` stays `/`).
    package static func trimmingTrailingSlashes(_ path: String) -> Substring {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1, trimmed.utf8.last == slash {
            trimmed = trimmed[..<trimmed.utf8.index(before: trimmed.utf8.endIndex)]
        }
        return trimmed
    }

    /// The last name of `path`, its trailing slashes ignored: `a/b/` → `b`; `/` and the empty
    /// path have none (empty).
    package static func lastName(_ path: String) -> Substring {
        let trimmed = trimmingTrailingSlashes(path)
        return lastSlash(String(trimmed))?.name ?? trimmed
    }

    /// A path as a dictionary key or set member that tells apart what the kernel tells apart.
    package struct Key: Hashable, Sendable {
        /// The path.
        package let path: String

        /// The key of `path`.
        package init(_ path: String) { self.path = path }

        package static func == (a: Key, b: Key) -> Bool { PathBytes.same(a.path, b.path) }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(path.utf8.count)
            for byte in path.utf8 { hasher.combine(byte) }
        }
    }
}

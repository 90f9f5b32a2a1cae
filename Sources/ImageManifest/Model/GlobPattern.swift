import ImageTableCore

/// A file-name pattern for `include` and `exclude`, matched against paths relative to a
/// family's `sources` directory (see `docs/MANIFEST.md`, "Globs").
///
/// Syntax: `*` matches any run of characters within one path segment, `?` one character,
/// `[abc]`, `[a-z]` and `[!a-z]` one character of (or not of) a set, `{jpg,png}` any of the
/// alternatives, `**` as a whole segment any number of directories (including none), and `\`
/// makes the next character literal. Matching is case-sensitive. Wildcards never match a `.` at
/// the start of a name, so hidden files and directories are skipped unless a pattern spells the
/// dot (`.*`); this is what shells and most glob libraries do.
public struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    /// Why a pattern was refused.
    public struct SyntaxError: Error, Equatable {
        /// A sentence for people.
        public let message: String
    }

    enum Segment: Hashable {
        case globstar
        case name([Token])
    }

    enum Token: Hashable {
        case literal(Character)
        case anyRun
        case anyOne
        case set(negated: Bool, members: [ClosedRange<Character>])
    }

    /// The file names of the image formats the pipeline decodes, in any case: the default
    /// `include`, `**/*.{jpg,jpeg,jpe,jfif,png,webp,gif,tif,tiff,heic,heif,avif}`.
    public static let images = GlobPattern(trusted: "**/*.{jpg,jpeg,jpe,jfif,png,webp,gif,tif,tiff,heic,heif,avif}", ignoringCase: true)

    /// Whether matching ignores case (the built-in ``images`` only; written patterns are
    /// case-sensitive).
    public private(set) var ignoresCase: Bool

    /// The pattern as written.
    public let pattern: String
    /// One segment list per brace alternative.
    let alternatives: [[Segment]]
    /// When every alternative is `**/*` and literal characters (the default `include` and most
    /// written ones, such as `**/*.png`), those characters, each alternative's: a path then
    /// matches when no directory on it is hidden and its file name, not hidden, ends with one
    /// of them, which ``matches(_:revealingHiddenFile:)`` checks without the general matcher
    /// (a tenth of an unchanged re-bake's time went to it, 1.6 µs a file).
    let suffixes: [String]?
    /// ``suffixes`` as bytes, when every one is ASCII without control characters: an ASCII path
    /// is then matched on its bytes, with no string made (a character of an ASCII string is its
    /// byte, but for `\r\n`, which a suffix without control characters cannot begin inside).
    let asciiSuffixes: [[UInt8]]?

    /// Most alternatives brace expansion may produce; more is surely a mistake.
    static let maxAlternatives = 64

    /// Parses a pattern.
    ///
    /// - Parameter pattern: the pattern as written in the manifest.
    /// - Throws: ``SyntaxError`` for an empty or absolute pattern, `.` or `..` segments, empty
    ///   segments, `**` inside a segment, unbalanced `[` or `{`, nested braces, a trailing `\`,
    ///   or more than 64 brace alternatives.
    public init(_ pattern: String) throws(SyntaxError) {
        func fail(_ message: String) -> SyntaxError { SyntaxError(message: message) }
        guard !pattern.isEmpty else { throw fail("a pattern cannot be empty") }
        guard !PathBytes.isAbsolute(pattern) else { throw fail("a pattern is relative to 'sources' and cannot start with '/'") }
        var segmentLists: [[Segment]] = []
        for alternative in try Self.expandBraces(pattern) {
            var segments: [Segment] = []
            // At slash bytes, as paths are split: `private/\u{301}*` is two segments.
            for part in PathBytes.parts(alternative) {
                switch part {
                case "" where !PathBytes.parts(pattern).dropFirst().dropLast().contains(where: \.isEmpty) && !PathBytes.endsWithSlash(pattern):
                    // `{}`, `{,}`, `x/{a,}`, `a/{,b}/c`: no `//` or trailing `/` was written; an
                    // alternative that is nothing leaves an empty segment (or no pattern at all).
                    throw fail("a brace alternative leaves a segment empty; give every alternative between '{' and '}' a name, "
                               + "or keep the '/' inside the braces")
                case "": throw fail("a pattern cannot contain an empty segment ('//' or a trailing '/')")
                case ".", "..": throw fail("a pattern cannot contain '\(part)' segments; it only matches below 'sources'")
                case "**": segments.append(.globstar)
                default:
                    segments.append(.name(try Self.tokens(part)))
                }
            }
            segmentLists.append(segments)
        }
        self.pattern = pattern
        alternatives = segmentLists
        suffixes = Self.suffixes(of: segmentLists)
        asciiSuffixes = suffixes.flatMap { all in
            all.allSatisfy { $0.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } } ? all.map { Array($0.utf8) } : nil
        }
        ignoresCase = false
    }

    /// The literal endings of alternatives that are all `**/*` and literals; `nil` otherwise.
    private static func suffixes(of alternatives: [[Segment]]) -> [String]? {
        var suffixes: [String] = []
        for segments in alternatives {
            guard segments.count == 2, segments[0] == .globstar, case .name(let tokens) = segments[1], tokens.first == .anyRun
            else { return nil }
            var literal = ""
            for token in tokens.dropFirst() {
                guard case .literal(let c) = token else { return nil }
                literal.append(c)
            }
            suffixes.append(literal)
        }
        return suffixes
    }

    /// The pattern as written.
    public var description: String { pattern }

    /// A pattern written in this source, known to parse; lower-case when it ignores case.
    private init(trusted pattern: String, ignoringCase: Bool = false) {
        do {
            try self.init(pattern)
        } catch {
            preconditionFailure("built-in pattern \(pattern) does not parse: \(error.message)")
        }
        ignoresCase = ignoringCase
    }

    /// Whether `relativePath` (`/`-separated, relative to `sources`) matches.
    ///
    /// - Parameter relativePath: a file's path below the family's `sources` directory.
    public func matches(_ relativePath: String) -> Bool {
        matches(relativePath, revealingHiddenFile: false)
    }

    /// Whether `relativePath` would match if wildcards also matched a `.` at the start of its
    /// file name (its last segment; hidden directories stay hidden). The baker uses it to say why
    /// it skips a file such as `..jpg` instead of skipping it silently.
    ///
    /// - Parameters:
    ///   - relativePath: a file's path below the family's `sources` directory.
    ///   - revealingHiddenFile: lift the leading-dot rule for the file name.
    public func matches(_ relativePath: String, revealingHiddenFile: Bool) -> Bool {
        if let asciiSuffixes, let matched = Self.matchASCII(relativePath, asciiSuffixes, ignoringCase: ignoresCase,
                                                             revealingHiddenFile: revealingHiddenFile) {
            return matched
        }
        let path = ignoresCase ? relativePath.lowercased() : relativePath
        if let suffixes {
            // What the general matcher decides for `**/*literal`: the globstar passes every
            // directory but a hidden one, and the file name must not be hidden (unless revealed)
            // and must end with the literal, compared by characters as the tokens are.
            let names = PathBytes.components(path)
            guard let name = names.last, !names.dropLast().contains(where: PathBytes.isHidden),
                  revealingHiddenFile || !PathBytes.isHidden(name) else { return false }
            return suffixes.contains { name.hasSuffix($0) }
        }
        return matchesByTokens(path, revealingHiddenFile: revealingHiddenFile)
    }

    /// Whether a path below `directory` (`/`-separated, relative to `sources`) may match: the
    /// pattern's leading segments can take the directory's names and leave a segment for what
    /// lies below. `d2` for `d1/*.jpg` may not, nor `.snap` for `**/*.jpg`; a scan that cannot
    /// list such a directory loses nothing the family takes.
    ///
    /// - Parameter directory: a directory's path below the family's `sources` directory.
    public func mayMatch(below directory: String) -> Bool {
        let path = ignoresCase ? directory.lowercased() : directory
        let names = PathBytes.components(path).map(String.init)
        return alternatives.contains { Self.match($0[...], names[...], shown: -1, prefix: true) }
    }

    /// What the ``suffixes`` shortcut decides, on an ASCII path's bytes; `nil` when the path is
    /// not ASCII. Case is folded byte by byte, as `lowercased()` folds ASCII.
    private static func matchASCII(_ path: String, _ suffixes: [[UInt8]], ignoringCase: Bool, revealingHiddenFile: Bool) -> Bool? {
        var path = path
        return path.withUTF8 { bytes -> Bool? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
            var end = bytes.count
            while end > 0 && bytes[end - 1] == slash { end -= 1 }
            guard end > 0 else { return false }
            var start = end
            while start > 0 && bytes[start - 1] != slash { start -= 1 }
            // A directory whose name starts with a dot: the globstar does not pass it.
            for i in 0..<start where bytes[i] == dot && (i == 0 || bytes[i - 1] == slash) { return false }
            if !revealingHiddenFile && bytes[start] == dot { return false }
            let name = UnsafeBufferPointer(rebasing: bytes[start..<end])
            return suffixes.contains { suffix in
                guard suffix.count <= name.count else { return false }
                let tail = name.count - suffix.count
                for j in suffix.indices {
                    var b = name[tail + j]
                    if ignoringCase && b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") { b += 32 }
                    if b != suffix[j] { return false }
                }
                return true
            }
        }
    }

    /// The general matcher, on a path already lower-cased when the pattern ignores case: what
    /// ``suffixes`` stands in for, and what the tests hold it to.
    func matchesByTokens(_ path: String, revealingHiddenFile: Bool) -> Bool {
        // Split at slash bytes: `split(separator: "/")` misses a slash that a combining mark
        // follows (one Character), so `private/\u{301}secret.jpg` was one name, which
        // `exclude: private/**` let through and `*.jpg` took.
        let names = PathBytes.components(path).map(String.init)
        let shown = revealingHiddenFile ? names.count - 1 : -1
        return alternatives.contains { Self.match($0[...], names[...], shown: shown) }
    }

    /// - Parameters:
    ///   - shown: the index of the name whose leading dot wildcards may match, or -1.
    ///   - prefix: whether `names` are a directory's, which matches when the segments take them
    ///     all and leave one at least for what lies below (``mayMatch(below:)``).
    private static func match(_ segments: ArraySlice<Segment>, _ names: ArraySlice<String>, shown: Int, prefix: Bool = false) -> Bool {
        // Memoised on (segments left, names left): `**` would otherwise backtrack exponentially.
        var memo: [Int: Bool] = [:]
        func go(_ s: Int, _ n: Int) -> Bool {
            let key = s * (names.count + 1) + n
            if let known = memo[key] { return known }
            let result: Bool
            if prefix && n == names.count {
                result = s < segments.count
            } else if s == segments.count {
                result = n == names.count
            } else {
                switch segments[segments.startIndex + s] {
                case .globstar:
                    result = go(s + 1, n) || (n < names.count && (n == shown || !PathBytes.isHidden(names[names.startIndex + n]))
                        && go(s, n + 1))
                case .name(let tokens):
                    result = n < names.count && matchName(tokens, Array(names[names.startIndex + n]), dotMayMatch: n == shown)
                        && go(s + 1, n + 1)
                }
            }
            memo[key] = result
            return result
        }
        return go(0, 0)
    }
}

/// A path pattern for a family's `include` and `exclude` lists.
///
/// Syntax, matched against a source's key (its path relative to the family's `sources`
/// directory, `/`-separated), case-insensitively because cameras write `.JPG`:
/// - `*` any run of characters except `/`; `?` one character except `/`;
/// - `**` as a whole path segment: any number of segments, including none (`**/*.png` matches
///   `a.png` and `x/y/a.png`);
/// - `[abc]`, `[a-z]`, `[!abc]` one character from (or not from) a set;
/// - `{jpg,jpeg}` one of several alternatives (not nested).
public struct Glob: Sendable, CustomStringConvertible {
    indirect enum Token: Sendable {
        case literal(Character)
        case any            // ?
        case star           // *
        case globstar       // **/ or trailing **
        case set([ClosedRange<Character>], negated: Bool)
        case alternatives([[Token]])
    }

    /// The pattern as written.
    public let pattern: String
    let tokens: [Token]

    /// Compiles a pattern.
    ///
    /// - Parameter pattern: the glob.
    /// - Throws: ``GlobError`` for an unclosed `[` or `{`, or an empty pattern.
    public init(_ pattern: String) throws {
        guard !pattern.isEmpty else { throw GlobError(pattern: pattern, reason: "pattern is empty") }
        self.pattern = pattern
        var chars = Array(pattern.lowercased())[...]
        tokens = try Self.parse(&chars, pattern: pattern, inBraces: false)
    }

    /// `pattern`.
    public var description: String { pattern }

    /// Whether `path` (a `/`-separated relative path) matches.
    ///
    /// - Parameter path: a source key.
    public func matches(_ path: String) -> Bool {
        Self.match(tokens[...], Array(path.lowercased())[...])
    }

    private static func parse(_ s: inout ArraySlice<Character>, pattern: String, inBraces: Bool) throws -> [Token] {
        var out: [Token] = []
        while let c = s.first {
            if inBraces && (c == "," || c == "}") { break }
            s.removeFirst()
            switch c {
            case "?": out.append(.any)
            case "*":
                if s.first == "*" {
                    s.removeFirst()
                    let atSegmentStart = out.isEmpty || { if case .literal("/") = out.last! { return true }; return false }()
                    if atSegmentStart && (s.first == "/" || s.isEmpty) {
                        if s.first == "/" { s.removeFirst() }
                        out.append(.globstar)
                    } else {
                        out.append(.star)  // `a**b` is just a star, as in most shells.
                    }
                } else {
                    out.append(.star)
                }
            case "[":
                var ranges: [ClosedRange<Character>] = []
                let negated = s.first == "!" || s.first == "^"
                if negated { s.removeFirst() }
                var closed = false
                while let d = s.first {
                    s.removeFirst()
                    if d == "]" && !ranges.isEmpty { closed = true; break }
                    if s.count >= 2, s.first == "-", let hi = s.dropFirst().first, hi != "]" {
                        s.removeFirst(2)
                        guard d <= hi else { throw GlobError(pattern: pattern, reason: "range \(d)-\(hi) is backwards") }
                        ranges.append(d...hi)
                    } else {
                        ranges.append(d...d)
                    }
                }
                guard closed else { throw GlobError(pattern: pattern, reason: "'[' is not closed") }
                out.append(.set(ranges, negated: negated))
            case "{":
                var options: [[Token]] = []
                while true {
                    options.append(try parse(&s, pattern: pattern, inBraces: true))
                    guard let d = s.first else { throw GlobError(pattern: pattern, reason: "'{' is not closed") }
                    s.removeFirst()
                    if d == "}" { break }
                }
                out.append(.alternatives(options))
            case "\\":
                guard let d = s.first else { throw GlobError(pattern: pattern, reason: "trailing backslash") }
                s.removeFirst()
                out.append(.literal(d))
            default: out.append(.literal(c))
            }
        }
        return out
    }

    private static func match(_ p: ArraySlice<Token>, _ s: ArraySlice<Character>) -> Bool {
        guard let token = p.first else { return s.isEmpty }
        let rest = p.dropFirst()
        switch token {
        case .literal(let c): return s.first == c && match(rest, s.dropFirst())
        case .any: return s.first.map { $0 != "/" } == true && match(rest, s.dropFirst())
        case .set(let ranges, let negated):
            guard let c = s.first, c != "/" else { return false }
            return ranges.contains { $0.contains(c) } != negated && match(rest, s.dropFirst())
        case .star:
            var t = s
            while true {
                if match(rest, t) { return true }
                guard let c = t.first, c != "/" else { return false }
                t = t.dropFirst()
            }
        case .globstar:
            // A trailing `**` takes everything; otherwise zero segments, or skip one whole
            // segment (through its `/`) and try again.
            if rest.isEmpty { return true }
            var t = s
            while true {
                if match(rest, t) { return true }
                guard let slash = t.firstIndex(of: "/") else { return false }
                t = t[(slash + 1)...]
            }
        case .alternatives(let options):
            return options.contains { match($0[...] + rest, s) }
        }
    }
}

/// A pattern that cannot be compiled.
public struct GlobError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as written.
    public let pattern: String
    /// What is wrong with it.
    public let reason: String

    /// `invalid pattern 'p': reason`.
    public var description: String { "invalid pattern '\(pattern)': \(reason)" }
}

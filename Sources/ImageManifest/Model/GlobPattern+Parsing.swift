extension GlobPattern {
    /// Expands `{a,b}` alternatives; braces do not nest.
    static func expandBraces(_ pattern: String) throws(SyntaxError) -> [String] {
        var results = [""]
        var chars = pattern.makeIterator()
        while let c = chars.next() {
            switch c {
            case "\\":
                guard let escaped = chars.next() else { throw SyntaxError(message: "a pattern cannot end with '\\'") }
                results = results.map { $0 + "\\" + String(escaped) }
            case "{":
                var options = [""]
                var closed = false
                while let d = chars.next() {
                    if d == "}" { closed = true; break }
                    if d == "{" { throw SyntaxError(message: "braces cannot nest") }
                    if d == "," { options.append(""); continue }
                    if d == "\\" {
                        guard let escaped = chars.next() else { throw SyntaxError(message: "a pattern cannot end with '\\'") }
                        options[options.count - 1] += "\\" + String(escaped)
                    } else {
                        options[options.count - 1].append(d)
                    }
                }
                guard closed else { throw SyntaxError(message: "'{' has no matching '}'") }
                guard results.count * options.count <= maxAlternatives else {
                    throw SyntaxError(message: "braces expand to more than \(maxAlternatives) alternatives")
                }
                results = results.flatMap { prefix in options.map { prefix + $0 } }
            case "}":
                throw SyntaxError(message: "'}' has no matching '{'")
            default:
                results = results.map { $0 + String(c) }
            }
        }
        return results
    }

    /// Parses one segment's wildcards.
    static func tokens(_ segment: Substring) throws(SyntaxError) -> [Token] {
        var tokens: [Token] = []
        var chars = Array(segment)[...]
        while let c = chars.popFirst() {
            switch c {
            case "*":
                guard tokens.last != .anyRun else { throw SyntaxError(message: "'**' must be a whole segment, as in '**/*.jpg'") }
                tokens.append(.anyRun)
            case "?": tokens.append(.anyOne)
            case "\\":
                guard let escaped = chars.popFirst() else { throw SyntaxError(message: "a pattern cannot end with '\\'") }
                tokens.append(.literal(escaped))
            case "[":
                var negated = false
                if chars.first == "!" || chars.first == "^" {
                    negated = true
                    chars = chars.dropFirst()
                }
                var members: [ClosedRange<Character>] = []
                var closed = false
                var first = true
                while let d = chars.popFirst() {
                    if d == "]" && !first { closed = true; break }
                    first = false
                    if chars.count >= 2, chars.first == "-", chars.dropFirst().first != "]" {
                        let upper = chars.dropFirst().first!
                        chars = chars.dropFirst(2)
                        guard d <= upper else { throw SyntaxError(message: "range '\(d)-\(upper)' is backwards") }
                        members.append(d...upper)
                    } else {
                        members.append(d...d)
                    }
                }
                guard closed else { throw SyntaxError(message: "'[' has no matching ']'") }
                tokens.append(.set(negated: negated, members: members))
            default:
                tokens.append(.literal(c))
            }
        }
        return tokens
    }

    /// Matches one path segment; wildcards do not match a leading `.` unless `dotMayMatch`.
    static func matchName(_ tokens: [Token], _ name: [Character], dotMayMatch: Bool = false) -> Bool {
        // Hidden by its first byte: a dot and a combining mark are one Character, not ".", and
        // wildcards took `.\u{301}b.jpg`. Only a pattern that spells that Character matches it.
        if !dotMayMatch, let first = name.first, first.unicodeScalars.first == ".", tokens.first != .literal(first) { return false }
        // Iterative wildcard matching: remember the last `*` and retry from one character later.
        var t = 0, n = 0
        var star: (token: Int, name: Int)?
        while n < name.count {
            if t < tokens.count, tokens[t] != .anyRun, matchOne(tokens[t], name[n]) {
                t += 1
                n += 1
            } else if t < tokens.count, tokens[t] == .anyRun {
                star = (t, n)
                t += 1
            } else if let s = star {
                star = (s.token, s.name + 1)
                t = s.token + 1
                n = s.name + 1
            } else {
                return false
            }
        }
        while t < tokens.count, tokens[t] == .anyRun { t += 1 }
        return t == tokens.count
    }

    private static func matchOne(_ token: Token, _ c: Character) -> Bool {
        switch token {
        case .literal(let l): l == c
        case .anyOne: true
        case .anyRun: false
        case .set(let negated, let members): members.contains { $0.contains(c) } != negated
        }
    }
}

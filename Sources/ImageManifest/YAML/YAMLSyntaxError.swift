import CLibYAML

/// A libyaml syntax error, placed where a person must edit and told in words.
///
/// libyaml places an error where it gave up (its problem mark), often lines after the mistake:
/// at the end of the file for an unclosed quote, on the next key for an unclosed `[` or a
/// missing `:`. The first rule that applies moves it to the cause:
///
/// 1. an unclosed quote: the opening quote (libyaml's context mark);
/// 2. an error right after a quoted value that runs on over several lines, or right after its
///    closing quote: that value, whose closing quote is probably missing (or misplaced);
/// 3. an error inside a `[` or `{` that nothing closes: that bracket;
/// 4. "mapping values are not allowed" after a plain value that runs on from an earlier line:
///    where that line's `:` is missing, when it starts with a key; otherwise the start of the
///    line indented as if it continued the value;
/// 5. a key without its `:`: where the `:` is missing;
/// 6. a plain value that starts with `*` or `&` (`include: *.jpg`), which YAML reads as an
///    alias or an anchor: that value, with the quotes a pattern needs;
/// 7. otherwise libyaml's own position.
///
/// Every position is then moved inside the file, never past its last line.
struct YAMLSyntaxError {
    let code: DiagnosticCode
    let message: String
    let location: SourceLocation

    /// Reads the error `parser` stopped with.
    ///
    /// - Parameters:
    ///   - parser: a parser whose last call failed.
    ///   - text: the text it read.
    ///   - lines: the same text, by lines.
    init(_ parser: yaml_parser_t, text: UnsafeBufferPointer<UInt8>, lines: SourceLines) {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown error"
        if parser.error == YAML_READER_ERROR {
            // Reader errors carry a byte offset, not a mark.
            self.init(.yamlSyntax, "YAML syntax error: \(problem)",
                      at: lines.location(ofOffset: lines.text.startIndex + parser.problem_offset), lines: lines)
            return
        }
        let problemAt = SourceLocation(parser.problem_mark)
        if problem.hasPrefix("Maximum nesting level") {
            // libyaml's scanner runs ahead through flow collections ("[[[[…"), so its own limit
            // of 1000 levels can trip before the first event reaches our limit of 32.
            self.init(.tooDeep, "collections nest deeper than libyaml's limit of 1000 levels; manifests need 6", at: problemAt, lines: lines)
            return
        }
        let reading = Reading(problem: problem, problemAt: problemAt, context: parser.context.map { String(cString: $0) },
                              contextAt: SourceLocation(parser.context_mark), lines: lines,
                              trail: TokenTrail.scan(text, upTo: parser.problem_mark))
        let (message, location) = reading.unclosedQuote() ?? reading.quotedValueCutShort() ?? reading.unclosedBracket()
            ?? reading.runOnKey() ?? reading.keyWithoutColon() ?? reading.patternReadAsAlias() ?? reading.asReported()
        self.init(.yamlSyntax, "YAML syntax error: " + message, at: location, lines: lines)
    }

    private init(_ code: DiagnosticCode, _ message: String, at location: SourceLocation, lines: SourceLines) {
        self.code = code
        self.message = message
        self.location = lines.clamped(location)
    }
}

/// One error as libyaml reported it, with the text around it; each rule of ``YAMLSyntaxError``
/// returns a message and a position, or `nil` when it does not apply.
private struct Reading {
    let problem: String
    let problemAt: SourceLocation
    let context: String?
    let contextAt: SourceLocation
    let lines: SourceLines
    let trail: TokenTrail

    typealias Placed = (message: String, location: SourceLocation)

    /// `at 6:12`, or `at the end of the file` for libyaml's mark past the last line.
    func at(_ location: SourceLocation) -> String {
        lines.offset(of: location) >= lines.text.endIndex ? "at the end of the file" : "at \(location)"
    }

    /// The quote character at `location`, for messages.
    func quote(at location: SourceLocation) -> String {
        lines.byte(at: location) == UInt8(ascii: "'") ? "'" : "\""
    }

    func unclosedQuote() -> Placed? {
        guard context == "while scanning a quoted scalar" else { return nil }
        let q = quote(at: contextAt)
        if problem.hasPrefix("found unexpected end of stream") {
            return ("this quoted value is never closed: the file ends before its closing \(q)", contextAt)
        }
        if problem.hasPrefix("found unexpected document indicator") {
            return ("this quoted value is not closed before the document marker \(at(problemAt)); add its closing \(q)", contextAt)
        }
        return nil
    }

    func quotedValueCutShort() -> Placed? {
        guard let value = trail.last, value.isQuoted else { return nil }
        let q = quote(at: value.start)
        let closingAt = SourceLocation(line: value.end.line, column: value.end.column - 1)
        if value.end.line > value.start.line {
            let over = underIndentedLine(after: value.start.line, through: value.end.line)
                .map { "runs on into line \($0), which is not indented past its key," } ?? "runs on over lines \(value.start.line + 1)–\(value.end.line)"
            return ("this quoted value \(over) up to the \(q) at \(closingAt); then \(problem) \(at(problemAt)); is its closing \(q) missing?",
                    value.start)
        }
        // Text right after the closing quote: either that quote was meant to open the next value
        // (`"a, "b"`: it follows a blank, `,` or a bracket, or it doubles the opening one) and a
        // closing quote is missing before it, or it belongs inside the value (`'it's'`).
        guard problemAt.line == value.end.line, lines.byte(at: value.end).map(isJunk) ?? false else { return nil }
        let closing = lines.offset(of: closingAt)
        let before = closing > lines.text.startIndex ? lines.text[closing - 1] : 0
        if [0x20, 0x09, UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "{")].contains(before) || closing - 1 == lines.offset(of: value.start) {
            return ("\(problem) \(at(problemAt)), right after this quoted value; its last \(q) (at \(closingAt)) looks like the opening of "
                    + "the next value: is a closing \(q) missing before it?", value.start)
        }
        return ("\(problem) \(at(problemAt)), right after the \(q) at \(closingAt) that ends this quoted value; if that \(q) belongs "
                + "inside the value, write it \(q == "'" ? "''" : "\\\"")", value.start)
    }

    /// Whether a byte right after a closing quote is neither a separator nor the end of a value.
    private func isJunk(_ byte: UInt8) -> Bool {
        ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"),
          UInt8(ascii: "#")].contains(byte)
    }

    /// The first line after `start` and up to `end` that holds something and is not indented
    /// more than line `start`, as the continuation of a value must be.
    func underIndentedLine(after start: Int, through end: Int) -> Int? {
        let indent = lines.indentation(ofLine: start)
        return (start + 1...max(start + 1, end)).first { !lines.isBlank($0) && lines.indentation(ofLine: $0) <= indent }
    }

    func unclosedBracket() -> Placed? {
        let offsets = trail.openFlows.map { lines.offset(of: $0.start) }
        let unclosed = FlowScan.unclosed(offsets, in: lines.text)
        for (bracket, offset) in zip(trail.openFlows, offsets).reversed() {
            guard unclosed.contains(offset), offset < lines.text.endIndex else { continue }
            let isList = lines.text[offset] == UInt8(ascii: "[")
            return ("this '\(isList ? "[" : "{")' is never closed (\(problem) \(at(problemAt))); add the '\(isList ? "]" : "}")' "
                    + "that ends the \(isList ? "list" : "mapping")", bracket.start)
        }
        return nil
    }

    func runOnKey() -> Placed? {
        guard problem == "mapping values are not allowed in this context", let value = trail.last, value.isPlain,
              value.start.line < problemAt.line else { return nil }
        guard let (hint, location, spaceless) = missingColon(inKeyAt: value.start) else {
            return ("\(problem): line \(problemAt.line) continues the value that starts at \(value.start), because it is indented "
                    + "more than that value's key; if it starts a key of its own, indent it no more than the key on line \(value.start.line)",
                    SourceLocation(line: problemAt.line, column: lines.indentation(ofLine: problemAt.line) + 1))
        }
        // `sources:photos` has its ':', without the space that would end the key there.
        let lacks = spaceless ? "has no space after its key's ':'" : "has no ':' after its key"
        return ("line \(value.start.line) \(lacks), so it runs on into line \(problemAt.line), where \(problem) "
                + "\(at(problemAt)); \(hint)", location)
    }

    func keyWithoutColon() -> Placed? {
        guard context == "while scanning a simple key", problem.hasPrefix("could not find expected ':'") else { return nil }
        // YAML limits an implicit key to 1024 characters, and libyaml then says the ':' is missing.
        let line = lines.bytes(ofLine: contextAt.line), from = lines.offset(of: contextAt)
        // Its ':' is the first one followed by a blank or the line's end: a ':' before a
        // non-blank is part of a plain key (`a:b`).
        if (line.startIndex...line.endIndex).contains(from),
           let colon = line[from...].indices.first(where: { line[$0] == UInt8(ascii: ":")
               && ($0 + 1 == line.endIndex || line[$0 + 1] == 0x20 || line[$0 + 1] == 0x09) }),
           String(decoding: line[from..<colon], as: UTF8.self).count > 1024 {
            return ("this key is longer than 1024 characters, YAML's limit for a key without '? ' before it, "
                    + "so libyaml does not see its ':'; shorten it", contextAt)
        }
        guard let (hint, location, spaceless) = missingColon(inKeyAt: contextAt) else {
            return ("this key is not followed by ':' on its line (\(problem) \(at(problemAt))); a key and its ':' must be on one line",
                    contextAt)
        }
        // `output:tables` has its ':', without the space that would end the key there.
        let lacks = spaceless ? "this key's ':' has no space after it" : "this key is not followed by ':'"
        return ("\(lacks) (\(problem) \(at(problemAt))); \(hint)", location)
    }

    /// For a plain value at `start` that begins its line, as a key does: a hint naming its first
    /// word and the position just after that word, where the `:` belongs (or just after a `:`
    /// that lacks its space, which the last element says).
    func missingColon(inKeyAt start: SourceLocation) -> (String, SourceLocation, Bool)? {
        let line = lines.bytes(ofLine: start.line)
        let from = lines.offset(of: start)
        // Only blanks and sequence dashes may come before a key on its line.
        guard (line.startIndex...line.endIndex).contains(from), line[line.startIndex..<from].allSatisfy({ $0 == 0x20 || $0 == UInt8(ascii: "-") }),
              let first = line[from...].first, ![UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "["), UInt8(ascii: "{")].contains(first)
        else { return nil }
        let word = line[from...].prefix { $0 != 0x20 && $0 != 0x09 }
        let shown = ValidationContext.printable(String(decoding: word, as: UTF8.self), limit: 40)
        if let colon = word.firstIndex(of: UInt8(ascii: ":")), colon + 1 < word.endIndex {
            let after = lines.location(ofOffset: colon + 1)
            return ("did you forget a space after the ':' in '\(shown)'? A key ends with ': '", after, true)
        }
        return ("did you forget ':' after '\(shown)'?", lines.location(ofOffset: word.endIndex), false)
    }

    func patternReadAsAlias() -> Placed? {
        let kind = context == "while scanning an alias" ? "an alias" : context == "while scanning an anchor" ? "an anchor" : nil
        guard let kind else { return nil }
        let line = lines.bytes(ofLine: contextAt.line)
        let from = lines.offset(of: contextAt)
        guard (line.startIndex..<line.endIndex).contains(from) else { return nil }
        let value = line[from...].prefix { ![0x20, 0x09, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains($0) }
        let shown = ValidationContext.printable(String(decoding: value, as: UTF8.self), limit: 40)
        return ("a value that starts with '\(shown.prefix(1))' is YAML's syntax for \(kind), not text (\(problem) \(at(problemAt))); "
                + "quote a pattern or a name: '\(shown)'", contextAt)
    }

    func asReported() -> Placed {
        var message = problem
        if let context, contextAt != problemAt { message += " (\(context) at \(contextAt))" }
        if lines.byte(at: problemAt) == 0x09 { message += "; YAML does not allow tabs for indentation, use spaces" }
        return (message, problemAt)
    }
}

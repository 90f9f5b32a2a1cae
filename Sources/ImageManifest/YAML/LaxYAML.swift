import CLibYAML

/// The forms libyaml accepts that YAML 1.2 forbids, each reported as a `lax-yaml` warning.
///
/// libyaml implements YAML 1.1 loosely, so a manifest it reads may be refused by the YAML 1.2
/// parsers of editors' language servers, ruamel or yamllint, or read differently by them. The
/// manifest still means one thing to us, so these are warnings, which `--warnings-as-errors`
/// makes errors for a strict CI. See `docs/MANIFEST.md`, "YAML".
struct LaxYAML {
    let lines: SourceLines

    static let verdict = "not valid YAML 1.2: other tools will refuse it"

    /// Where an event sits among the open collections.
    struct Nesting {
        /// The open flow collections.
        let flowDepth: Int
        /// Whether the innermost open collection is a flow one.
        let innermostIsFlow: Bool
        /// The spaces each continuation line of a flow value needs here.
        let required: Int
    }

    /// The lax form of a scalar event, if any.
    func check(scalar event: yaml_event_t, in nesting: Nesting) -> YAMLComposer.Problem? {
        let data = event.data.scalar
        let start = SourceLocation(event.start_mark), end = SourceLocation(event.end_mark)
        let next = lines.byte(atCharacter: event.end_mark.index)
        switch data.style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE, YAML_DOUBLE_QUOTED_SCALAR_STYLE:
            // Inside a flow collection, the outermost one checks every line it spans. A value
            // that runs on past its lines usually lacks its closing quote, and the '#' after the
            // quote that ends it is not a comment anyone meant: one warning says both.
            if let runOn = continuation(from: start, to: end.line, required: nesting.required, isQuoted: true) {
                return nesting.flowDepth > 0 ? nil : runOn
            }
            return commentWithoutSpace(quotedFrom: start, after: end, next: next)
        case YAML_PLAIN_SCALAR_STYLE where data.length == 1 && nesting.innermostIsFlow:
            return loneDash(String(decoding: UnsafeBufferPointer(start: data.value, count: 1), as: UTF8.self), at: start, next: next)
        default:
            return nil
        }
    }

    /// The lax forms of the end event of a flow collection that starts at `start`.
    func check(flowEnd event: yaml_event_t, from start: SourceLocation, in nesting: Nesting) -> [YAMLComposer.Problem] {
        let end = SourceLocation(event.end_mark)
        let runOn = nesting.flowDepth == 1 ? continuation(from: start, to: end.line, required: nesting.required, isQuoted: false) : nil
        let comment = commentWithoutSpace(quotedFrom: nil, after: end, next: lines.byte(atCharacter: event.end_mark.index))
        return [comment, runOn].compactMap { $0 }
    }

    /// A problem at `location`.
    private func lax(_ what: String, _ fix: String, at location: SourceLocation) -> YAMLComposer.Problem {
        YAMLComposer.Problem(code: .laxYAML, message: "\(what); \(Self.verdict); \(fix)", location: location)
    }

    /// `"out"# c` or `[a]#c`: a `#` right after a quoted value or a closing bracket, which
    /// libyaml takes as a comment; YAML 1.2 needs a blank before a comment.
    ///
    /// A quoted value that began on an earlier line is reported where it begins: most often it
    /// swallowed the lines up to a quote that was meant to open a value such as `"#fff"`.
    ///
    /// - Parameters:
    ///   - start: where the quoted value starts, or `nil` after a closing bracket.
    ///   - end: the position just after the value or bracket.
    ///   - next: the byte there.
    func commentWithoutSpace(quotedFrom start: SourceLocation?, after end: SourceLocation, next: UInt8?) -> YAMLComposer.Problem? {
        guard next == UInt8(ascii: "#") else { return nil }
        let comment = "a comment only for libyaml, since a comment must follow a blank"
        guard let start else {
            return lax("'#' right after a closing bracket starts \(comment)", "put a space before the '#'", at: end)
        }
        if start.line < end.line {
            return lax("this quoted value runs from line \(start.line) to line \(end.line), where the '#' right after it (at \(end)) "
                       + "starts \(comment)", "is a closing quote missing on line \(start.line)?", at: start)
        }
        if end.column - start.column == 2 {
            // `""#fff"`: an empty value, then a comment; most likely a quote was doubled.
            return lax("this empty quoted value is followed by a '#' (at \(end)) that starts \(comment)", "is a quote doubled?", at: start)
        }
        return lax("'#' right after a quoted value starts \(comment)", "put a space before the '#'", at: end)
    }

    /// `[-, -x]`: a plain `-` in a flow collection, followed by a blank, a flow indicator or the
    /// end. libyaml reads it as the string `-`; YAML 1.2 lets `-` start a plain value only when a
    /// character that may follow in one comes next.
    func loneDash(_ text: String, at start: SourceLocation, next: UInt8?) -> YAMLComposer.Problem? {
        guard text == "-" else { return nil }
        guard next.map({ [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"),
                          UInt8(ascii: "}")].contains($0) }) ?? true else { return nil }
        return lax("a lone '-' is not a value inside a flow collection", "quote it: \"-\"", at: start)
    }

    /// A quoted value or a flow collection that goes on over lines not indented past the block
    /// it is in (by `required` spaces, before any tab): YAML 1.2 wants every line of it, the
    /// closing quote or bracket included, indented so; libyaml does not check.
    ///
    /// - Parameters:
    ///   - start: the opening quote or bracket.
    ///   - endLine: the line of the closing quote or bracket.
    ///   - required: the spaces each continuation line needs: one more than the enclosing block
    ///     collection's indentation, 0 at the top level.
    ///   - isQuoted: whether it is a quoted value, whose lines are all content; in a flow
    ///     collection, lines that hold only a comment may be indented anyhow.
    func continuation(from start: SourceLocation, to endLine: Int, required: Int, isQuoted: Bool) -> YAMLComposer.Problem? {
        guard required > 0, endLine > start.line else { return nil }
        let bad = (start.line + 1...endLine).first { line in
            guard let first = lines.firstContentByte(ofLine: line), isQuoted || first != UInt8(ascii: "#") else { return false }
            return lines.indentation(ofLine: line) < required
        }
        guard let bad else { return nil }
        let tab = lines.bytes(ofLine: bad).dropFirst(lines.indentation(ofLine: bad)).first == 0x09
        let what = isQuoted ? "this quoted value" : lines.byte(at: start) == UInt8(ascii: "[") ? "this list" : "this mapping"
        let indent = tab ? "starts with a tab" : lines.indentation(ofLine: bad) == 0 ? "starts at column 1"
            : "is indented by only \(lines.indentation(ofLine: bad)) space\(lines.indentation(ofLine: bad) == 1 ? "" : "s")"
        let spaces = "at least \(required) space\(required == 1 ? "" : "s")"
        let fix = isQuoted ? "indent line \(bad) by \(spaces), or close the quote where the value ends" : "indent line \(bad) by \(spaces)"
        return lax("line \(bad), which continues \(what), \(indent); it must be indented more than the block the value is in",
                   fix, at: start)
    }

    /// `%YAML 1.1#c`: a `#` right after the version, which libyaml takes as a comment.
    ///
    /// - Parameter lastLine: the line of the `---` that ends the directives.
    func directiveComments(before lastLine: Int) -> [YAMLComposer.Problem] {
        // Only the lines just above the `---`: directives, comments and blanks; so each line is
        // looked at once, however many documents the file has.
        let first = (1..<max(lastLine, 1)).reversed().first { line in
            guard let byte = lines.firstContentByte(ofLine: line) else { return false }
            return byte != UInt8(ascii: "%") && byte != UInt8(ascii: "#")
        }.map { $0 + 1 } ?? 1
        return (first..<max(lastLine, first)).compactMap { line in
            let bytes = lines.bytes(ofLine: line)
            guard bytes.starts(with: Array("%YAML".utf8)) else { return nil }
            let version = bytes.dropFirst(5).drop { $0 == 0x20 || $0 == 0x09 }.prefix { $0 != 0x20 && $0 != 0x09 }
            guard let hash = version.firstIndex(of: UInt8(ascii: "#")) else { return nil }
            return lax("'#' right after the %YAML version starts a comment only for libyaml, since a comment must follow a blank",
                       "put a space before the '#'", at: lines.location(ofOffset: hash))
        }
    }
}

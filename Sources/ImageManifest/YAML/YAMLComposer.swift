import CLibYAML

/// Builds a ``YAMLNode`` tree from libyaml's event stream, under ``ManifestLimits``.
///
/// Why not `Yams.compose`: Yams hashes every mapping's keys to find duplicates, and a key that is
/// an alias of a "billion laughs" collection is hashed node by node (exponential time); it stops
/// at the first duplicate, naming one position; and it recurses per nesting level. This composer
/// is a loop over events with an explicit stack, so nesting costs heap, not stack; it charges an
/// alias for its target's expanded size and height *before* attaching it, so a bomb is refused
/// at its first oversized alias; and it reports duplicate keys with both positions and carries on.
///
/// Fatal problems (syntax, limits, a second document) stop composition; the rest leave an
/// ``YAMLNode/Kind/invalid`` node behind so that validation continues around them.
struct YAMLComposer {
    /// A problem found while composing.
    struct Problem: Equatable {
        let code: DiagnosticCode
        let message: String
        let location: SourceLocation
    }

    /// The root (nil when composition stopped before the first document ended) and the problems.
    struct Result {
        var root: YAMLNode?
        var problems: [Problem] = []
    }

    /// Composes the first document of `text`, which must already be valid UTF-8 without a BOM.
    ///
    /// - Parameter text: the manifest's bytes.
    /// - Returns: the document's root and every problem found.
    static func compose(_ text: ArraySlice<UInt8>) -> Result {
        let end = text.withUnsafeBufferPointer { TextPosition.location(ofByte: $0.count, in: $0) }
        var state = ComposerState(end: end)
        text.withUnsafeBufferPointer { buffer in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                state.fail(.yamlSyntax, "libyaml could not start (out of memory)", at: .start)
                return
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var event = yaml_event_t()
            while !state.stopped {
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let (code, message, location) = syntaxError(parser, text: buffer, end: end)
                    state.fail(code, message, at: location)
                    break
                }
                state.handle(event)
                yaml_event_delete(&event)
            }
        }
        if state.root == nil && state.result.problems.isEmpty {
            state.fail(.emptyFile, "the manifest holds no YAML document, only comments", at: .start)
        }
        state.result.root = state.root
        return state.result
    }

    /// libyaml's description of a syntax error and where it is.
    private static func syntaxError(_ parser: yaml_parser_t, text: UnsafeBufferPointer<UInt8>, end: SourceLocation)
        -> (DiagnosticCode, String, SourceLocation) {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown error"
        var location: SourceLocation
        if parser.error == YAML_READER_ERROR {
            // Reader errors carry a byte offset, not a mark.
            location = TextPosition.location(ofByte: parser.problem_offset, in: text)
        } else {
            location = TextPosition.inside(parser.problem_mark, end: end)
        }
        if problem.hasPrefix("Maximum nesting level") {
            // libyaml's scanner runs ahead through flow collections ("[[[[…"), so its own limit
            // of 1000 levels can trip before the first event reaches our limit of 32.
            return (.tooDeep, "collections nest deeper than libyaml's limit of 1000 levels; manifests need 6", location)
        }
        var message = "YAML syntax error: \(problem)"
        if let context = parser.context.map({ String(cString: $0) }), parser.error != YAML_READER_ERROR {
            let mark = TextPosition.inside(parser.context_mark, end: end)
            message += " (\(context) at \(mark.line):\(mark.column))"
        }
        if TextPosition.character(at: location, in: text) == 0x09 {
            message += "; YAML does not allow tabs for indentation, use spaces"
        }
        return (.yamlSyntax, message, location)
    }
}

/// Positions in the raw text, for problems libyaml reports by byte offset or that need the
/// character at a position.
enum TextPosition {
    /// The line and column of byte `offset`.
    static func location(ofByte offset: Int, in text: UnsafeBufferPointer<UInt8>) -> SourceLocation {
        var line = 1, column = 1, i = 0
        while i < min(offset, text.count) {
            let b = text[i]
            if b == 0x0A || (b == 0x0D && (i + 1 == text.count || text[i + 1] != 0x0A)) {
                line += 1
                column = 1
            } else if b != 0x0D && (b & 0xC0) != 0x80 {
                column += 1
            }
            i += 1
        }
        return SourceLocation(line: line, column: column)
    }

    /// A libyaml mark as a position inside a text that ends at `end` (``location(ofByte:in:)``
    /// of its length). At the end of a text whose last line has no line break, libyaml moves its
    /// mark to a line of its own (it forces a new line before the stream end), one past the
    /// text's last line: an error there, or a value left empty (`? <<`), is placed at the end of
    /// the last line instead.
    static func inside(_ mark: yaml_mark_t, end: SourceLocation) -> SourceLocation {
        let location = SourceLocation(line: mark.line + 1, column: mark.column + 1)
        return location.line > end.line ? end : location
    }

    /// The first byte of the character at `location`, or `nil` past the end of its line.
    static func character(at location: SourceLocation, in text: UnsafeBufferPointer<UInt8>) -> UInt8? {
        var line = 1, column = 1
        for b in text {
            if line == location.line && column == location.column { return b }
            if b == 0x0A {
                if line == location.line { return nil }
                line += 1
                column = 1
            } else if (b & 0xC0) != 0x80 {
                column += 1
            }
        }
        return nil
    }
}

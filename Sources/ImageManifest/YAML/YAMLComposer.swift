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
        /// The number of documents that started, so that an empty first one is not called the only one.
        var documents = 0
    }

    /// Composes the first document of `text`, which must already be valid UTF-8 without a BOM;
    /// later documents are read for their syntax only.
    ///
    /// - Parameter text: the manifest's bytes.
    /// - Returns: the document's root and every problem found.
    static func compose(_ text: ArraySlice<UInt8>) -> Result { compose(SourceLines(text)) }

    /// Composes the first document of `lines`' text.
    ///
    /// - Parameter lines: the manifest's bytes, by lines.
    /// - Returns: the document's root and every problem found.
    static func compose(_ lines: SourceLines) -> Result {
        let text = lines.text
        var state = ComposerState(lines: lines)
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
                    let error = YAMLSyntaxError(parser, text: buffer, lines: lines)
                    state.fail(error.code, error.message, at: error.location)
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
        state.result.documents = state.documents
        return state.result
    }
}

import CLibYAML

/// What libyaml's scanner had read when a syntax error stopped it: the flow collections still
/// open and the last token before the error. The parser's own report says neither.
///
/// The composer drives the parser, whose tokens are freed as it consumes them, and whose scanner
/// may fail ahead of it with tokens still queued. A second pass of the scanner alone over the
/// same text, stopped at the error's mark, recovers both. It runs only after an error, once.
struct TokenTrail {
    /// A token's kind, as far as placing an error needs it.
    enum Kind: Equatable {
        /// `[` or `{`.
        case flowStart(UInt8)
        case flowEnd
        case scalar(quoted: Bool)
        case other
    }

    /// One token and where it lies.
    struct Token {
        let kind: Kind
        let start: SourceLocation
        let end: SourceLocation

        var isQuoted: Bool { kind == .scalar(quoted: true) }
        var isPlain: Bool { kind == .scalar(quoted: false) }
    }

    /// The `[` and `{` not closed before the error, outermost first.
    private(set) var openFlows: [Token] = []
    /// The last token before the error that stands for text (not one of the zero-width tokens
    /// libyaml adds for block structure and keys).
    private(set) var last: Token?

    /// Scans `text` up to `problem`, the error's mark.
    static func scan(_ text: UnsafeBufferPointer<UInt8>, upTo problem: yaml_mark_t) -> TokenTrail {
        var trail = TokenTrail()
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return trail }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(&parser, text.baseAddress, text.count)
        var token = yaml_token_t()
        while yaml_parser_scan(&parser, &token) == 1 {
            defer { yaml_token_delete(&token) }
            guard token.type != YAML_STREAM_END_TOKEN, token.start_mark.index < problem.index else { return trail }
            trail.add(token)
        }
        // The scanner failed: the tokens it had queued, waiting to learn whether a key
        // followed, lie before its error.
        var queued = parser.tokens.head
        while let current = queued, current != parser.tokens.tail {
            if current.pointee.start_mark.index < problem.index { trail.add(current.pointee) }
            queued = current + 1
        }
        return trail
    }

    private mutating func add(_ token: yaml_token_t) {
        let kind: Kind
        switch token.type {
        case YAML_FLOW_SEQUENCE_START_TOKEN: kind = .flowStart(UInt8(ascii: "["))
        case YAML_FLOW_MAPPING_START_TOKEN: kind = .flowStart(UInt8(ascii: "{"))
        case YAML_FLOW_SEQUENCE_END_TOKEN, YAML_FLOW_MAPPING_END_TOKEN: kind = .flowEnd
        case YAML_SCALAR_TOKEN:
            let style = token.data.scalar.style
            kind = .scalar(quoted: style == YAML_SINGLE_QUOTED_SCALAR_STYLE || style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
        case YAML_STREAM_START_TOKEN, YAML_BLOCK_SEQUENCE_START_TOKEN, YAML_BLOCK_MAPPING_START_TOKEN, YAML_BLOCK_END_TOKEN,
             YAML_KEY_TOKEN:
            return
        default: kind = .other
        }
        let t = Token(kind: kind, start: SourceLocation(token.start_mark), end: SourceLocation(token.end_mark))
        switch kind {
        case .flowStart: openFlows.append(t)
        case .flowEnd: _ = openFlows.popLast()
        default: break
        }
        last = t
    }
}

extension SourceLocation {
    /// The position of a libyaml mark, whose line and column count from 0.
    init(_ mark: yaml_mark_t) {
        self.init(line: mark.line + 1, column: mark.column + 1)
    }
}

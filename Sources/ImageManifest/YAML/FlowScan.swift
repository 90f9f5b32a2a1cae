/// A rough reading of flow collections, to tell an unterminated `[` or `{` from one that is
/// closed but holds a mistake.
///
/// libyaml reports an unclosed bracket wherever it gives up, often lines later; to point at the
/// bracket instead, we must know that nothing closes it. This scan follows brackets, quoted
/// values and comments only, which is enough for that question and needs no YAML state.
enum FlowScan {
    /// Those of `brackets` (offsets of `[` or `{`, each inside the one before, as libyaml's open
    /// collections are) that nothing closes: no bracket of their own kind comes, with every
    /// bracket opened inside them closed first.
    ///
    /// One pass over the text from the outermost, however many brackets there are.
    static func unclosed(_ brackets: [Int], in text: ArraySlice<UInt8>) -> Set<Int> {
        guard let first = brackets.min() else { return [] }
        let ours = Set(brackets)
        var unclosed: Set<Int> = []
        var open: [(offset: Int, closer: UInt8)] = []
        var i = first
        while i < text.endIndex {
            let byte = text[i]
            if let close = closer(of: byte) {
                open.append((i, close))
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                if open.last?.closer == byte {
                    open.removeLast()
                } else {
                    // The wrong bracket: whatever is open here is never closed by its own.
                    unclosed.formUnion(open.map(\.offset).filter(ours.contains))
                    open.removeAll()
                }
            } else if (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")) && startsToken(at: i, in: text) {
                i = endOfQuoted(at: i, in: text)
            } else if byte == UInt8(ascii: "#") && startsToken(at: i, in: text) {
                while i < text.endIndex && SourceLines.breakWidth(at: i, in: text) == 0 { i += 1 }
            }
            i += 1
        }
        return unclosed.union(open.map(\.offset).filter(ours.contains))
    }

    private static func closer(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "["): UInt8(ascii: "]")
        case UInt8(ascii: "{"): UInt8(ascii: "}")
        default: nil
        }
    }

    /// Whether a quote or `#` at `i` starts a token rather than sitting inside a plain value:
    /// it follows the start of a line, a blank, or a flow indicator.
    static func startsToken(at i: Int, in text: ArraySlice<UInt8>) -> Bool {
        guard i > text.startIndex else { return true }
        return [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ",")].contains(text[i - 1])
    }

    /// The offset of the quote that closes the quoted value opening at `i` (`''` is a quote
    /// inside single quotes, `\"` inside double ones), or the last offset when none does.
    private static func endOfQuoted(at i: Int, in text: ArraySlice<UInt8>) -> Int {
        let quote = text[i]
        var j = i + 1
        while j < text.endIndex {
            if quote == UInt8(ascii: "\"") && text[j] == UInt8(ascii: "\\") {
                j += 2
                continue
            }
            if text[j] == quote {
                guard quote == UInt8(ascii: "'"), j + 1 < text.endIndex, text[j + 1] == quote else { return j }
                j += 2
                continue
            }
            j += 1
        }
        return text.endIndex - 1
    }
}

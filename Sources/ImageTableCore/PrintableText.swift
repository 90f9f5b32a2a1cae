/// Text from a file made safe for one line of a terminal.
///
/// Keys, names and manifest values are whatever a producer wrote: a line break would split a
/// compiler-style line in two, and control or bidirectional-override characters could make a
/// line read differently from what it is (or drive the terminal). Every tool that prints such
/// text escapes it with this; JSON output needs no help.
public enum PrintableText {
    /// `text` with line breaks, tabs, control, format (but the zero-width joiners) and separator
    /// characters written as `\n`, `\r`, `\t` or `\u{…}`, and cut to `limit` characters (with
    /// `…`) when it is longer.
    ///
    /// - Parameters:
    ///   - text: the text.
    ///   - limit: the longest result, or `nil` for no limit.
    public static func escaped(_ text: String, limit: Int? = nil) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let category = scalar.properties.generalCategory
                // Spaces other than U+0020 too: invisible or confusable, and a CI runner trims
                // them before it looks for a command at the start of a line. Not the zero-width
                // joiner and non-joiner, format characters that are parts of words (Persian,
                // Indic scripts) and of emoji (👨‍👩‍👧), which move and reorder nothing: escaped, a
                // name's annotation named a file that does not exist.
                if category == .control || (category == .format && !Self.joiners.contains(scalar.value))
                    || category == .lineSeparator || category == .paragraphSeparator
                    || (category == .spaceSeparator && scalar != " ") {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        guard let limit, out.count > limit else { return out }
        return String(out.prefix(limit)) + "…"
    }

    /// U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER, left as they are.
    private static let joiners: Set<UInt32> = [0x200C, 0x200D]

    /// `text` with no line that a CI system reads as a command. GitHub Actions takes an output
    /// line that starts, after blanks, with `::` as a workflow command (`::error …`, and
    /// `::stop-commands::…`, which silences every annotation after it), and `##[…]` anywhere
    /// in a line as one of its older form; Azure Pipelines takes `##vso[…]` and `##[…]`
    /// anywhere. A path that begins a line (a manifest named `::error …`, an `output:`
    /// directory in a table row) gets `./` before it, which leaves a relative path naming the
    /// same file; `##[` and `##vso[` anywhere are written `#\u{23}[`, as ``escaped(_:limit:)``
    /// writes what it escapes.
    ///
    /// - Parameter text: lines already escaped for the terminal (so with no blank but space
    ///   and tab, which is all a line may start with here), or any text.
    /// - Returns: the text, each such line guarded.
    public static func uncommanded(_ text: String) -> String {
        guard text.contains("::") || text.contains("##") else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let guarded = writingOutCommandMarkers(String(line))
            let start = guarded.firstIndex { !$0.isWhitespace } ?? guarded.endIndex
            guard guarded[start...].hasPrefix("::") else { return guarded }
            return String(guarded[..<start]) + "./" + guarded[start...]
        }.joined(separator: "\n")
    }

    /// `text` with GitHub's older workflow commands (`##[`) and Azure Pipelines' (`##vso[`),
    /// which those runners read anywhere in a line, written `#\u{23}[` and `#\u{23}vso[`.
    package static func writingOutCommandMarkers(_ text: String) -> String {
        guard text.contains("##") else { return text }
        return text.replacingOccurrences(of: "##[", with: "#\\u{23}[").replacingOccurrences(of: "##vso[", with: "#\\u{23}vso[")
    }

    /// One line for a terminal or a CI log: ``escaped(_:limit:)``, then ``uncommanded(_:)``.
    ///
    /// - Parameter text: the line.
    public static func line(_ text: String) -> String { uncommanded(escaped(text)) }

    /// A key quoted for messages: `'photos/a.jpg'`.
    ///
    /// - Parameter key: the key.
    public static func quoted(_ key: String) -> String { "'" + escaped(key) + "'" }
}

/// Text from a file made safe for one line of a terminal.
///
/// Keys, names and manifest values are whatever a producer wrote: a line break would split a
/// compiler-style line in two, and control or bidirectional-override characters could make a
/// line read differently from what it is (or drive the terminal). Every tool that prints such
/// text escapes it with this; JSON output needs no help.
public enum PrintableText {
    /// `text` with line breaks, tabs, control, format (but the zero-width joiners inside a word
    /// or an emoji) and separator characters written as `\n`, `\r`, `\t` or `\u{…}`, and cut
    /// to `limit` characters (with `…`) when it is longer.
    ///
    /// - Parameters:
    ///   - text: the text.
    ///   - limit: the longest result, or `nil` for no limit.
    public static func escaped(_ text: String, limit: Int? = nil) -> String {
        var out = ""
        let scalars = Array(text.unicodeScalars)
        for i in scalars.indices {
            if let written = writtenOut(scalars, at: i) { out += written } else { out.unicodeScalars.append(scalars[i]) }
        }
        guard let limit, out.count > limit else { return out }
        return String(out.prefix(limit)) + "…"
    }

    /// How the scalar at `i` is written, or `nil` when it is printed as it is: `\n`, `\r` and
    /// `\t`, and `\u{…}` for the other characters ``escaped(_:limit:)`` writes out. Its
    /// neighbours decide for a zero-width joiner.
    ///
    /// - Parameters:
    ///   - scalars: the text's scalars.
    ///   - i: the scalar's position.
    package static func writtenOut(_ scalars: [Unicode.Scalar], at i: Int) -> String? {
        let scalar = scalars[i]
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            guard isWrittenOut(scalar), !(joiners.contains(scalar.value) && joins(scalars, at: i)) else { return nil }
            return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// Whether `scalar` is written out: control, format and separator characters (spaces other
    /// than U+0020 too: invisible or confusable, and a CI runner trims them before it looks for
    /// a command at the start of a line).
    private static func isWrittenOut(_ scalar: Unicode.Scalar) -> Bool {
        let category = scalar.properties.generalCategory
        return category == .control || category == .format || category == .lineSeparator
            || category == .paragraphSeparator || (category == .spaceSeparator && scalar != " ")
    }

    /// U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER.
    private static let joiners: Set<UInt32> = [0x200C, 0x200D]

    /// Whether the joiner at `i` stands between two characters it can join: kept as it is, since
    /// it is part of a word (Persian, Indic scripts) or of an emoji (👨‍👩‍👧), and written out, an
    /// emoji name's annotation named a file that does not exist. Beside a character below U+0370
    /// (ASCII, Latin-1, Latin Extended-A and -B, IPA, combining diacritics), at
    /// either end, or beside another written-out character it joins nothing and shows nothing:
    /// `a\u{200D}.jpg` would print as `a.jpg`, another file's name.
    private static func joins(_ scalars: [Unicode.Scalar], at i: Int) -> Bool {
        func joinable(_ j: Int) -> Bool {
            scalars.indices.contains(j) && scalars[j].value >= 0x370 && !isWrittenOut(scalars[j])
        }
        return joinable(i - 1) && joinable(i + 1)
    }

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

import Foundation
import ImageTableCore

/// How many columns text takes on a terminal, for carets and table columns that must line up
/// under text a manifest's author or a file system chose: Chinese, Japanese and Korean
/// characters and most emoji take two columns, combining marks and zero-width characters none.
///
/// The East Asian Width property (Unicode Standard Annex #11, "W" and "F") is not among the
/// scalar properties Swift exposes, so the wide blocks are listed here, as terminals' own
/// `wcwidth` tables list them; an unlisted rare wide scalar counts as one column, which only
/// shifts a caret, never loses text.
enum TerminalWidth {
    /// The columns of the terminal standard error is; `COLUMNS` when the terminal does not
    /// say; 80 when neither does.
    static func standardError() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }

    /// The columns `text` takes.
    static func columns(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + columns($1) }
    }

    /// The columns one scalar takes: 0, 1 or 2.
    static func columns(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x300 { return 1 }  // ASCII and Latin-1: the common case, at once
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if v == 0x200B || (0xFE00...0xFE0F).contains(v) { return 0 }  // zero-width space, variation selectors
        if scalar.properties.isEmojiPresentation { return 2 }
        return wide.contains { $0.contains(v) } ? 2 : 1
    }

    /// `text` followed by spaces up to `width` columns (as `padding(toLength:)` does for
    /// characters), or `text` itself when it is as wide already.
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - columns(text)))
    }

    /// The blocks of East Asian Wide and Fullwidth scalars (UAX #11).
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initials
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x1B000...0x1B2FF,  // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B–F, compatibility supplement
        0x30000...0x3FFFD,  // CJK extensions G–H
    ]
}

/// Rows of cells as columns two spaces apart, indented by two, widths in terminal columns (a key
/// in Chinese or with emoji lines up as one in ASCII does): the tables of `bake`, `merge`,
/// `inspect` and `validate`.
enum TextTable {
    /// The lines of the table, each ending in a newline, without trailing spaces.
    ///
    /// - Parameters:
    ///   - rows: the cells, header first, as many in each row; already escaped for the terminal.
    ///   - rightAligned: the columns whose cells are padded on the left (numbers).
    static func render(_ rows: [[String]], rightAligned: Set<Int>) -> String {
        // GitHub's and Azure's command markers written out, and a line's first cell that starts
        // with `::` given its `./`, before the widths are measured: done after (by
        // PrintableText.uncommanded), they widened their row.
        let rows = rows.map { row in
            row.enumerated().map { c, cell in
                let cell = PrintableText.writingOutCommandMarkers(cell)
                return c == 0 && cell.hasPrefix("::") ? "./" + cell : cell
            }
        }
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { c in rows.map { TerminalWidth.columns($0[c]) }.max() ?? 0 }
        return rows.map { row in
            "  " + row.indices.map { c in
                let pad = String(repeating: " ", count: max(0, widths[c] - TerminalWidth.columns(row[c])))
                return rightAligned.contains(c) ? pad + row[c] : row[c] + pad
            }.joined(separator: "  ").trimmedTrailingSpaces() + "\n"
        }.joined()
    }

    /// The lines of a table whose first column is text and the others numbers.
    ///
    /// - Parameters:
    ///   - header: the column titles.
    ///   - rows: the cells, as many per row as titles; already escaped for the terminal.
    static func render(header: [String], rows: [[String]]) -> String {
        render([header] + rows, rightAligned: Set(header.indices.dropFirst()))
    }
}

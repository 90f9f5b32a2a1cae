/// Text from a table made safe for a terminal line (the same rules as `imagetable`'s, which
/// this executable does not link).
///
/// Keys are whatever a producer stored: a line break would split a compiler-style line in two,
/// and control or bidirectional-override characters could make a line read differently from
/// what it is (or drive the terminal). Text output escapes them; JSON output needs no help.
enum Printable {
    /// `text` with line breaks, tabs, control, format and separator characters written as
    /// `\n`, `\t` or `\u{…}`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let category = scalar.properties.generalCategory
                if category == .control || category == .format || category == .lineSeparator || category == .paragraphSeparator {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A key quoted for messages: `'photos/a.jpg'`.
    static func quoted(_ key: String) -> String { "'" + escaped(key) + "'" }
}

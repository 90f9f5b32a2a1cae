import ImageTableCore
import Testing

/// What a terminal line may show of a name as it is, and what it writes out.
@Suite struct PrintableTextTests {
    /// The zero-width joiner and non-joiner are parts of emoji and of words in several scripts:
    /// kept, so a name reads (and a GitHub annotation names its file) as it is. Format
    /// characters that reorder or hide text are still written out.
    @Test func joinersStayAndOtherFormatCharactersAreWrittenOut() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.jpg"
        #expect(PrintableText.escaped(family) == family)
        #expect(PrintableText.escaped("mi\u{200C}khwaham.jpg") == "mi\u{200C}khwaham.jpg")
        #expect(PrintableText.escaped("a\u{202E}gpj.exe") == "a\\u{202E}gpj.exe", "a right-to-left override")
        #expect(PrintableText.escaped("a\u{200B}b") == "a\\u{200B}b", "a zero-width space")
        #expect(PrintableText.escaped("\u{FEFF}x\u{1B}[31m") == "\\u{FEFF}x\\u{1B}[31m")
    }
}

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
        let persian = "\u{645}\u{6CC}\u{200C}\u{62E}\u{648}\u{627}\u{647}\u{645}.jpg"
        #expect(PrintableText.escaped(persian) == persian)
        let flag = "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}"
        #expect(PrintableText.escaped(flag) == flag, "after a variation selector, a mark")
        #expect(PrintableText.escaped("a\u{202E}gpj.exe") == "a\\u{202E}gpj.exe", "a right-to-left override")
        #expect(PrintableText.escaped("a\u{200B}b") == "a\\u{200B}b", "a zero-width space")
        #expect(PrintableText.escaped("\u{FEFF}x\u{1B}[31m") == "\\u{FEFF}x\\u{1B}[31m")
    }

    /// A joiner that joins nothing shows nothing: beside ASCII or Latin letters, at either end,
    /// or beside another joiner, it is written out, or `a\u{200D}.jpg` printed as `a.jpg`.
    @Test func joinersThatJoinNothingAreWrittenOut() {
        #expect(PrintableText.escaped("a\u{200D}.jpg") == "a\\u{200D}.jpg")
        #expect(PrintableText.escaped("\u{E9}\u{200C}\u{E9}") == "\u{E9}\\u{200C}\u{E9}", "Latin")
        #expect(PrintableText.escaped("\u{200D}\u{1F469}") == "\\u{200D}\u{1F469}", "at the start")
        #expect(PrintableText.escaped("\u{1F469}\u{200D}") == "\u{1F469}\\u{200D}", "at the end")
        #expect(PrintableText.escaped("\u{1F469}\u{200D}\u{200D}\u{1F469}") == "\u{1F469}\\u{200D}\\u{200D}\u{1F469}")
    }
}

import TestSupport
import Testing
@testable import ImageManifest

/// One validation rule exercised through a format body inside `manifest(format:)`, whose first
/// line is line 8, column 9.
struct RuleCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let format: String
    /// `line:column code` of every diagnostic.
    let expected: [String]
    /// A phrase the first diagnostic's message must contain.
    let message: String
}

private let valid = "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: 10"

@Suite struct RuleTests {
    static let cases: [RuleCase] = [
        RuleCase(testDescription: "unknown style, with suggestion", format: "size: 50x50\nstyle: 32BitRGBA\nmaximumCount: 10",
                 expected: ["9:16 unknown-style"], message: "unknown style '32BitRGBA'; did you mean '32BitBGRA'?"),
        RuleCase(testDescription: "unknown style, far from any", format: "size: 50x50\nstyle: RGB\nmaximumCount: 10",
                 expected: ["9:16 unknown-style"], message: "use one of 32BitBGRA, 32BitBGR, 16BitBGR, 8BitGrayscale"),
        RuleCase(testDescription: "misspelt key is unknown, not also missing", format: "size: 50x50\nstyle: 32BitBGRA\nmaximumcount: 10",
                 expected: ["10:9 unknown-key"], message: "did you mean 'maximumCount'?"),
        RuleCase(testDescription: "another tool's word for a key is unknown, not also missing",
                 format: "size: 50x50\nstyle: 32BitBGRA\nmaxCount: 10", expected: ["10:9 unknown-key"], message: "did you mean 'maximumCount'?"),
        RuleCase(testDescription: "another tool's word for a colour", format: valid + "\ncolor: \"#fff\"", expected: ["11:9 unknown-key"],
                 message: "unknown key 'color' in format 'small'; did you mean 'background'?"),
        RuleCase(testDescription: "misspelt key merged from an anchor is unknown, not also missing",
                 format: "<<: {size: 50x50, maximumcount: 10}\nstyle: 32BitBGRA", expected: ["8:27 unknown-key"],
                 message: "unknown key 'maximumcount' merged into format 'small'; did you mean 'maximumCount'?"),
        RuleCase(testDescription: "quoted boolean", format: valid + "\nupscale: 'true'", expected: ["11:18 wrong-type"],
                 message: "'upscale' must be true or false, not a string; remove the quotes"),
        RuleCase(testDescription: "quoted number", format: valid + "\ncornerRadius: \"2.5\"", expected: ["11:23 wrong-type"],
                 message: "'cornerRadius' must be a number, not a string; remove the quotes"),
        RuleCase(testDescription: "hexadecimal where a number may have a fraction", format: valid + "\ncornerRadius: 0x4", expected: ["11:23 wrong-type"],
                 message: "'cornerRadius' must be a decimal number;"),
        RuleCase(testDescription: "scales without brackets", format: valid + "\nscales: 1, 2", expected: ["11:17 wrong-type"],
                 message: "write it in brackets: [1, 2]"),
        RuleCase(testDescription: "size with no value, at its key", format: "size:\nstyle: 32BitBGRA\nmaximumCount: 10", expected: ["8:9 invalid-size"],
                 message: "'size' has no value"),
        RuleCase(testDescription: "swapped letters", format: "size: 50x50\nstlye: 32BitBGRA\nmaximumCount: 10",
                 expected: ["9:9 unknown-key"], message: "did you mean 'style'?"),
        RuleCase(testDescription: "missing key at the format's name", format: "size: 50x50\nmaximumCount: 10",
                 expected: ["7:7 missing-key"], message: "format 'small' is missing the required key 'style'"),
        RuleCase(testDescription: "quoted integer", format: "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: \"10\"",
                 expected: ["10:23 wrong-type"], message: "remove the quotes"),
        RuleCase(testDescription: "size zero", format: "size: 0x50\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["8:15 invalid-size"], message: "at least 1x1"),
        RuleCase(testDescription: "size as a list of one", format: "size: [50]\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["8:15 invalid-size"], message: "two integers"),
        RuleCase(testDescription: "size over the pixel limit at scale 3", format: "size: 6000x10\nscales: [1, 3]\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["8:15 size-too-large"], message: "18000x30 pixels"),
        RuleCase(testDescription: "scale out of range", format: "size: 50x50\nscales: [9]\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["9:18 invalid-scale"], message: "outside 1…8"),
        RuleCase(testDescription: "duplicate scale", format: "size: 50x50\nscales: [2, 2]\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["9:21 duplicate-scale"], message: "already listed at line 9, column 18"),
        RuleCase(testDescription: "empty scales", format: "size: 50x50\nscales: []\nstyle: 32BitBGRA\nmaximumCount: 10",
                 expected: ["9:17 empty-collection"], message: "'scales' is empty"),
        RuleCase(testDescription: "unknown fit", format: valid + "\nfit: cove", expected: ["11:14 unknown-fit"], message: "did you mean 'cover'?"),
        RuleCase(testDescription: "unknown crop", format: valid + "\ncrop: middle", expected: ["11:15 unknown-crop"],
                 message: "use one of centre, attention, entropy"),
        RuleCase(testDescription: "crop without cover", format: valid + "\nfit: inside\ncrop: entropy", expected: ["12:9 crop-without-cover"],
                 message: "no effect with fit 'inside'"),
        RuleCase(testDescription: "unknown protection", format: valid + "\nprotection: private", expected: ["11:21 unknown-protection"],
                 message: "unknown protection mode 'private'"),
        RuleCase(testDescription: "corner radius over half the smaller side", format: "size: 50x40\nstyle: 32BitBGRA\nmaximumCount: 10\ncornerRadius: 21",
                 expected: ["11:23 corner-radius-too-large"], message: "at most 20"),
        RuleCase(testDescription: "corner radius beside a bad scales", format: "size: 50x40\nscales: [1, 1]\nstyle: 32BitBGRA\nmaximumCount: 10\ncornerRadius: 21",
                 expected: ["9:21 duplicate-scale", "12:23 corner-radius-too-large"], message: "scale 1 is already listed"),
        RuleCase(testDescription: "negative corner radius", format: valid + "\ncornerRadius: -1", expected: ["11:23 invalid-corner-radius"],
                 message: "0 or more"),
        RuleCase(testDescription: "infinite corner radius", format: valid + "\ncornerRadius: .inf", expected: ["11:23 invalid-corner-radius"],
                 message: "finite"),
        RuleCase(testDescription: "unquoted colour", format: valid + "\nbackground: #ffffff", expected: ["11:9 invalid-color"],
                 message: "an unquoted # starts a YAML comment"),
        RuleCase(testDescription: "malformed colour", format: valid + "\nbackground: \"#fffff\"", expected: ["11:21 invalid-color"],
                 message: "'#fffff' is not a colour"),
        RuleCase(testDescription: "translucent background on an opaque style", format: "size: 50x50\nstyle: 32BitBGR\nmaximumCount: 10\nbackground: \"#0008\"",
                 expected: ["11:21 background-alpha-ignored"], message: "has no alpha"),
        RuleCase(testDescription: "background on a style that keeps alpha", format: "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: 10\nbackground: \"#fff\"",
                 expected: ["11:9 background-unused"], message: "no effect with style 32BitBGRA"),
        RuleCase(testDescription: "maximumCount zero", format: "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: 0",
                 expected: ["10:23 maximum-count-out-of-range"], message: "outside 1…100000000"),
        RuleCase(testDescription: "maximumCount too large", format: "size: 50x50\nstyle: 32BitBGRA\nmaximumCount: 100000001",
                 expected: ["10:23 maximum-count-out-of-range"], message: "100000001"),
        RuleCase(testDescription: "table over 16 TiB", format: "size: 4096x4096\nstyle: 32BitBGRA\nmaximumCount: 300000",
                 expected: ["7:7 table-too-large"], message: "small.imagetable"),
        RuleCase(testDescription: "YAML 1.1 boolean", format: valid + "\nupscale: yes", expected: ["11:18 wrong-type"],
                 message: "YAML 1.2 reads 'yes' as a string"),
        RuleCase(testDescription: "key without a value", format: "size: 50x50\nstyle:\nmaximumCount: 10",
                 expected: ["9:9 wrong-type"], message: "'style' has no value"),
        RuleCase(testDescription: "duplicate key names both positions", format: valid + "\nstyle: 16BitBGR",
                 expected: ["11:9 duplicate-key"], message: "duplicate key 'style'; it is already defined at line 9, column 9"),
        RuleCase(testDescription: "format that is not a mapping", format: "- size: 50x50",
                 expected: ["8:9 wrong-type"], message: "format 'small' must be a mapping of keys, not a list"),
    ]

    @Test(arguments: cases)
    func reportsTheRule(_ rule: RuleCase) throws {
        let report = try check(manifest(format: rule.format))
        #expect(summary(report) == rule.expected, "\(report.diagnostics.map(\.description))")
        let first = try #require(report.diagnostics.first)
        #expect(first.message.contains(rule.message), "\(first.message)")
        #expect(report.isValid == (first.severity == .warning))
    }

    @Test func validFormatHasNoDiagnostics() throws {
        let report = try check(manifest(format: valid))
        #expect(report.diagnostics.isEmpty)
        #expect(report.isValid)
    }

    @Test func keyPathsNameTheKey() throws {
        let report = try check(manifest(format: "size: 50x50\nstyle: 32BitRGBA\nmaximumCount: 10"))
        #expect(report.diagnostics.map(\.keyPath) == ["families.users.formats.small.style"])
    }

    @Test func everyProblemIsReportedInOneRun() throws {
        let yaml = """
            version: 3
            output: /tmp
            families:
              users:
                sources: photos
                formats:
                  a: {size: 0x0, style: 32BitBGRA, maximumCount: 10}
                  b: {size: 10x10, style: 24Bit, maximumCount: 10}
              more:
                sources: photos
                formats:
                  a: {size: 10x10, style: 32BitBGRA, maximumCount: 10}
                  c: {size: 10x10, style: 32BitBGRA, maximumCount: 10, fit: stretch}
            """
        let report = try check(yaml)
        #expect(summary(report) == ["1:10 unsupported-version", "2:9 outside-path", "7:17 invalid-size", "8:31 unknown-style",
                                    "12:7 duplicate-format", "13:65 unknown-fit"])
    }

    /// A misspelt section key (`familes:`, `formts:`) hid every error below it until it was
    /// fixed: the value of a key with a suggestion is checked as the key suggested.
    @Test func errorsBelowAMisspeltKeyAreReportedWithIt() throws {
        let format = "      big: {size: 5x5, style: 32BitBGRX, maximumCont: 3}"
        let family = try check("version: 1\noutput: tables\nfamilies:\n  more:\n    sources: photos\n    formts:\n" + format)
        #expect(summary(family) == ["6:5 unknown-key", "7:31 unknown-style", "7:42 unknown-key"], "\(family.diagnostics)")
        let root = try check("version: 1\noutput: tables\nfamiles:\n  more:\n    sources: photos\n    formats:\n" + format)
        #expect(summary(root) == ["3:1 unknown-key", "7:31 unknown-style", "7:42 unknown-key"], "\(root.diagnostics)")
        // A key near no known one hides its value still: no guess is checked.
        let far = try check("version: 1\noutput: tables\nfamilies:\n  more:\n    sources: photos\n    thumbnails:\n" + format)
        #expect(summary(far) == ["4:3 missing-key", "6:5 unknown-key"], "\(far.diagnostics)")
    }

    /// `<<: *bas` said to quote it if it was a pattern, and three `missing-key` errors followed
    /// for the keys the merge was to bring: the anchor meant is suggested, and a mapping whose
    /// merge failed is not said to lack keys.
    @Test func anUndefinedAliasSuggestsTheAnchorWithoutFollowOns() throws {
        let yaml = "version: 1\noutput: tables\nx-base: &base {size: 50x50, style: 32BitBGRA, maximumCount: 10}\nfamilies:\n"
            + "  more:\n    sources: photos\n    formats:\n      d:\n        <<: *bas\n      e:\n        <<: [*base, *zzz]\n"
        let report = try check(yaml)
        #expect(summary(report) == ["9:13 undefined-alias", "11:21 undefined-alias"], "\(report.diagnostics)")
        #expect(report.diagnostics.map(\.message) == [
            "alias *bas refers to no anchor &bas defined before it; did you mean *base?",
            "alias *zzz refers to no anchor &zzz defined before it; if it is a pattern, quote it: '*zzz'; else define &zzz on a value above this line",
        ])
    }

    @Test func warningsAsErrorsPromotes() throws {
        let yaml = manifest(format: valid + "\nfit: contain\ncrop: entropy")
        #expect(try check(yaml).isValid)
        let strict = try check(yaml, options: ValidationOptions(warningsAsErrors: true))
        #expect(!strict.isValid)
        #expect(strict.diagnostics.map(\.severity) == [.error])
    }

    @Test func echoedValuesCannotBreakOrDisguiseLines() throws {
        let report = try check(manifest(format: "size: 50x50\nstyle: \"32Bit\\nRGBA\\u202E\"\nmaximumCount: 10"))
        let message = try #require(report.diagnostics.first?.message)
        #expect(message.hasPrefix("unknown style '32Bit\\nRGBA\\u{202E}'"), "\(message)")
        #expect(!report.diagnostics[0].description.contains("\n"))
        #expect(ValidationContext.printable(String(repeating: "x", count: 2000)).count == 1001)
    }
}

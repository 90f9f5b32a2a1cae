import TestSupport
import Testing
@testable import ImageManifest

/// The YAML layer: types, positions, aliases, merge keys and extension keys.
@Suite struct ComposerTests {
    private func compose(_ yaml: String) -> YAMLComposer.Result {
        YAMLComposer.compose(Array(yaml.utf8)[...])
    }

    @Test(arguments: [
        ("yes", ScalarValue.string("yes")), ("no", .string("no")), ("on", .string("on")),
        ("true", .bool(true)), ("False", .bool(false)),
        ("012", .int(12)), ("-5", .int(-5)), ("+7", .int(7)), ("0x1F", .string("0x1F")),
        ("99999999999999999999", .int(nil)),
        ("1.5", .float(1.5)), ("1e3", .float(1000)), (".inf", .float(.infinity)), (".nan", .float(.nan)),
        ("~", .null), ("null", .null), ("", .null), ("50x50", .string("50x50")), ("#fff", .string("#fff")),
    ])
    func plainScalarsResolveByTheCoreSchema(_ text: String, _ expected: ScalarValue) {
        #expect(ScalarValue.resolve(text, style: .plain, tag: nil) == expected)
    }

    @Test func quotedAndTaggedScalars() {
        #expect(ScalarValue.resolve("10", style: .quoted, tag: nil) == .string("10"))
        #expect(ScalarValue.resolve("10", style: .block, tag: nil) == .string("10"))
        #expect(ScalarValue.resolve("10", style: .plain, tag: "str") == .string("10"))
        #expect(ScalarValue.resolve("10", style: .quoted, tag: "int") == .int(10))
        #expect(ScalarValue.resolve("true", style: .quoted, tag: "bool") == .bool(true))
    }

    @Test func positionsAreOneBasedAndCountCharacters() throws {
        // "é" is two bytes but one column.
        let result = compose("{version: 1, output: \"é\", familiess: 1}")
        guard case .mapping(let pairs) = try #require(result.root).kind else { Issue.record("not a mapping"); return }
        #expect(pairs.map(\.key.location) == [SourceLocation(line: 1, column: 2), SourceLocation(line: 1, column: 14),
                                              SourceLocation(line: 1, column: 27)])
    }

    @Test func duplicateKeysNameBothPositionsAndKeepTheFirst() throws {
        let result = compose("a: 1\nb: 2\na: 3\na: 4\n")
        #expect(result.problems.map(\.code) == [.duplicateKey, .duplicateKey])
        #expect(result.problems.map(\.location) == [SourceLocation(line: 3, column: 1), SourceLocation(line: 4, column: 1)])
        #expect(result.problems[0].message == "duplicate key 'a'; it is already defined at line 1, column 1")
        guard case .mapping(let pairs) = try #require(result.root).kind else { Issue.record("not a mapping"); return }
        #expect(pairs.map { $0.value.scalar?.text } == ["1", "2"])
    }

    /// Keys are compared code point by code point, as YAML compares strings: `é` as one code
    /// point and as `e` with a combining accent are two keys (Swift's `==` made the second a
    /// duplicate); the same spelling twice, quoted or not, is one.
    @Test func keysThatDifferOnlyInNormalizationAreTwoKeys() throws {
        let result = compose("x-caf\u{E9}: 1\nx-cafe\u{301}: 2\n\"x-caf\u{E9}\": 3\n")
        #expect(result.problems.map(\.code) == [.duplicateKey])
        #expect(result.problems.map(\.location) == [SourceLocation(line: 3, column: 1)])
        guard case .mapping(let pairs) = try #require(result.root).kind else { Issue.record("not a mapping"); return }
        #expect(pairs.map { Array($0.key.scalar?.text.unicodeScalars ?? "".unicodeScalars) }
                == [Array("x-caf\u{E9}".unicodeScalars), Array("x-cafe\u{301}".unicodeScalars)])
    }

    @Test func aliasesShareTheirTargetAndItsPositionAndKnowTheirOwn() throws {
        let result = compose("a: &x [1, 2]\nb: *x\n")
        #expect(result.problems.isEmpty)
        guard case .mapping(let pairs) = try #require(result.root).kind,
              case .sequence(let items) = pairs[0].value.kind, case .sequence(let aliased) = pairs[1].value.kind else {
            Issue.record("not a mapping of two sequences")
            return
        }
        #expect(items.count == 2 && aliased.count == 2 && zip(items, aliased).allSatisfy { $0 === $1 })
        #expect(pairs[1].value.location == SourceLocation(line: 1, column: 4))
        #expect(pairs[1].value.aliasLocation == SourceLocation(line: 2, column: 4))
        #expect(pairs[0].value.aliasLocation == nil)
        // Root, two keys, the list and its two items, and the alias counted as its three nodes.
        #expect(try #require(result.root).weight == 1 + 2 + 3 + 3)
    }

    @Test func secondDocumentStillValidatesTheFirst() throws {
        let report = try check(manifest(format: "size: 5x5\nstyle: RGB\nmaximumCount: 1") + "---\n{}\n")
        #expect(summary(report) == ["9:16 unknown-style", "11:1 multiple-documents"])
    }

    @Test func mergeKeysApplyWithExplicitKeysWinning() throws {
        let yaml = """
            version: 1
            output: tables
            x-base: &base {style: 32BitBGRA, maximumCount: 10, fit: contain}
            x-more: &more {style: 8BitGrayscale, cornerRadius: 2}
            families:
              users:
                sources: photos
                formats:
                  small:
                    <<: [*base, *more]
                    size: 50x50
                    fit: cover
            """
        let report = try check(yaml)
        #expect(report.diagnostics.isEmpty)
        let format = try #require(report.manifest?.formats.first)
        #expect(format.style == .bgra32)  // the first merged mapping wins over the second
        #expect(format.rendering.fit == .cover)     // the explicit key wins over every merged one
        #expect(format.rendering.cornerRadius == 2)
        #expect(format.capacity == 10)
    }

    @Test func mergeOfAScalarIsAnError() throws {
        let report = try check(manifest(format: "<<: 5\nsize: 5x5\nstyle: 32BitBGRA\nmaximumCount: 1"))
        #expect(summary(report) == ["8:13 wrong-type"])
    }

    @Test func extensionKeysAreIgnoredAtFixedKeyLevels() throws {
        let yaml = manifest(format: "x-note: anything at all\nsize: 5x5\nstyle: 32BitBGRA\nmaximumCount: 1", extraFamilyKeys: "\n    x-owner: team-photos")
        let report = try check("x-top: {a: [1, 2]}\n" + yaml)
        #expect(report.diagnostics.isEmpty)
        #expect(report.isValid)
    }

    @Test func collectionTagsOtherThanMapAndSeqAreRefused() {
        let result = compose("a: !!omap [x: 1]\nb: !!map {c: 1}\nc: !!seq [1]\n")
        #expect(result.problems.map(\.code) == [.unsupportedTag])
        #expect(result.problems.first?.location == SourceLocation(line: 1, column: 4))
    }

    @Test func tabsInIndentationGetAHint() {
        let result = compose("a:\n\tb: 1\n")
        #expect(result.problems.first?.code == .yamlSyntax)
        #expect(result.problems.first?.message.hasSuffix("YAML does not allow tabs for indentation, use spaces") == true)
    }

    /// libyaml places the end of a text whose last line has no line break on a line of its own,
    /// past the text; `make fuzz` found the syntax error reported there (Fuzz/Corpus/manifests).
    /// It is reported at the bracket left open, inside the text, whatever the line breaks.
    @Test(arguments: [
        ("version: 1\noutput: tables\nfamilies: {users: {sources: ., formats: [\n# expect: error yaml-syntax 6:1\n# schej",
         ImageManifest.SourceLocation(line: 3, column: 41)),
        ("version: 1\r\noutput: tables\r\nfamilies: {a: [", ImageManifest.SourceLocation(line: 3, column: 15)),
        ("version: 1\noutput: tables\nfamilies: {a: [\n", ImageManifest.SourceLocation(line: 3, column: 15)),
    ])
    func aSyntaxErrorAtTheEndIsPlacedInsideTheText(_ yaml: String, _ location: ImageManifest.SourceLocation) {
        let result = compose(yaml)
        #expect(result.problems.map(\.code) == [.yamlSyntax])
        #expect(result.problems.first?.location == location)
        #expect(result.problems.first?.message.hasPrefix("YAML syntax error: this '[' is never closed") == true)
    }

    /// So does an empty value at the very end, which libyaml places at the stream's end: a
    /// merge key with no value was reported on line 2 of a one-line text (`make fuzz`).
    @Test func anEmptyValueAtTheEndIsPlacedInsideTheText() throws {
        let result = compose("? <<")
        guard case .mapping(let pairs) = try #require(result.root).kind else { Issue.record("not a mapping"); return }
        #expect(pairs.map(\.value.location) == [ImageManifest.SourceLocation(line: 1, column: 5)])
        let report = ManifestValidator(options: ValidationOptions()).validate(contents: Array("? <<".utf8), file: "fuzz.yaml")
        #expect(summary(report) == ["1:1 missing-key", "1:1 missing-key", "1:1 missing-key", "1:5 wrong-type"])
    }

    /// A key over YAML's 1024-character limit is said to be too long, also when a ':' inside it
    /// (`a:b…`, part of a plain key) comes before the ':' that ends it; that case was told
    /// its ':' was missing.
    @Test(arguments: ["", "a:b", "x: "])
    func aKeyOverTheLimitIsSaidToBeTooLong(prefix: String) {
        let key = prefix + String(repeating: "k", count: 1100)
        let result = compose("version: 1\n\(key): 1\n")
        #expect(result.problems.map(\.code) == [.yamlSyntax])
        let tooLong = result.problems.first?.message.contains("this key is longer than 1024 characters") == true
        // `x: kkk…: 1` is a key `x` whose value holds ': ', another error entirely.
        #expect(tooLong == (prefix != "x: "), "\(result.problems)")
    }
}

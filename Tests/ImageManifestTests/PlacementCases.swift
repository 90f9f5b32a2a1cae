import Testing

/// The manifests of issue 16, each a small edit of one valid manifest, with the diagnostics it
/// must give: syntax errors where the edit is, lax YAML as warnings, values and documents read
/// as YAML 1.2 says. The placement tests check them through the library and the three outputs;
/// the mutation test mutates them too.
struct PlacementCase: Sendable, CustomTestStringConvertible {
    let name: String
    let yaml: String
    /// `line:column code` of every diagnostic, in order.
    let expected: [String]
    /// A phrase the first diagnostic's message must contain.
    let says: String

    var testDescription: String { name }
    var fileName: String { name + ".yaml" }

    /// Eleven lines; `photos` exists where the tests write it.
    static let base = """
        version: 1
        output: tables
        families:
          users:
            sources: photos
            include: ["*.jpg", "*.png"]
            formats:
              small:
                size: 50x50
                style: 32BitBGRA
                maximumCount: 10

        """

    /// `base` with line `line` (from 1) replaced by `text`, which may hold several lines.
    static func base(line: Int, _ text: String) -> String {
        var lines = base.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[line - 1] = text
        return lines.joined(separator: "\n")
    }

    static let all: [PlacementCase] = [
        // Syntax errors, at the edit.
        PlacementCase(name: "unclosed-quote", yaml: base(line: 2, "output: \"tables").replacingOccurrences(of: "[\"*.jpg\", \"*.png\"]", with: "[photo*]"),
                      expected: ["2:9 yaml-syntax"], says: "this quoted value is never closed: the file ends before its closing \""),
        PlacementCase(name: "unclosed-quote-closed-later", yaml: base(line: 2, "output: \"tables"), expected: ["2:9 yaml-syntax"],
                      says: "this quoted value runs on into line 3, which is not indented past its key, up to the \" at 6:15; then did not find expected alphabetic or numeric character at 6:17; is its closing \" missing?"),
        PlacementCase(name: "missing-colon", yaml: base(line: 5, "    sources photos"), expected: ["5:12 yaml-syntax"],
                      says: "did you forget ':' after 'sources'?"),
        PlacementCase(name: "missing-bracket", yaml: base(line: 6, "    include: [\"*.jpg\", \"*.png\""), expected: ["6:14 yaml-syntax"],
                      says: "this '[' is never closed (did not find expected ',' or ']' at 7:5)"),
        PlacementCase(name: "missing-space-after-colon", yaml: base(line: 5, "    sources:photos"), expected: ["5:13 yaml-syntax"],
                      says: "line 5 has no space after its key's ':', so it runs on into line 6, where mapping values are not allowed "
                        + "in this context at 6:12; did you forget a space after the ':' in 'sources:photos'?"),
        PlacementCase(name: "missing-space-after-colon-before-a-key", yaml: base(line: 2, "output:tables"), expected: ["2:8 yaml-syntax"],
                      says: "this key's ':' has no space after it (could not find expected ':' at 3:1); did you forget a space after "
                        + "the ':' in 'output:tables'?"),
        PlacementCase(name: "key-indented-into-a-value", yaml: base(line: 3, "  families:"), expected: ["3:3 yaml-syntax"],
                      says: "line 3 continues the value that starts at 2:9, because it is indented more than that value's key"),
        PlacementCase(name: "quote-closed-too-early", yaml: base(line: 6, "    include: [\"*.jpg, \"*.png\"]"),
                      expected: ["6:15 yaml-syntax"], says: "is a closing \" missing before it?"),
        // libyaml accepts these; YAML 1.2 does not.
        PlacementCase(name: "comment-after-quote", yaml: base(line: 2, "output: \"tables\"# c"), expected: ["2:17 lax-yaml"],
                      says: "not valid YAML 1.2: other tools will refuse it"),
        PlacementCase(name: "comment-after-bracket", yaml: base(line: 6, "    include: [\"*.jpg\", \"*.png\"]#c"),
                      expected: ["6:32 lax-yaml"], says: "'#' right after a closing bracket"),
        PlacementCase(name: "quote-continued-at-column-1", yaml: base(line: 2, "output: \"tab\nles\""), expected: ["2:9 lax-yaml"],
                      says: "line 3, which continues this quoted value, starts at column 1"),
        PlacementCase(name: "flow-continued-after-tab", yaml: base(line: 6, "    include: [\"*.jpg\",\n\t\"*.png\"]"),
                      expected: ["6:14 lax-yaml"], says: "line 7, which continues this list, starts with a tab"),
        PlacementCase(name: "lone-dash", yaml: base(line: 6, "    include: [-, -x]"), expected: ["6:15 lax-yaml"],
                      says: "a lone '-' is not a value inside a flow collection"),
        PlacementCase(name: "directive-comment", yaml: "%YAML 1.1#c\n---\n" + base, expected: ["1:10 lax-yaml"],
                      says: "'#' right after the %YAML version"),
        // Values as YAML 1.2 reads them.
        PlacementCase(name: "non-specific-tag", yaml: base(line: 11, "        maximumCount: ! 12"), expected: ["11:23 wrong-type"],
                      says: "not a string; remove the '!' tag"),
        PlacementCase(name: "str-tag", yaml: base(line: 11, "        maximumCount: !!str 12"), expected: ["11:23 wrong-type"],
                      says: "not a string; remove the '!!str' tag"),
        PlacementCase(name: "hexadecimal-count", yaml: base(line: 11, "        maximumCount: 0x10"), expected: ["11:23 wrong-type"],
                      says: "only decimal numbers: write 16"),
        PlacementCase(name: "keys-equal-by-value", yaml: base(line: 1, "version: 1\nx-keys: {1: a, \"1\": b, 01: c}"),
                      expected: ["2:24 duplicate-key"], says: "duplicate key '01'; it is already defined at line 2, column 10 as '1'"),
        // Documents.
        PlacementCase(name: "second-document-syntax", yaml: base + "---\nversion: [1\n", expected: ["12:1 multiple-documents", "13:10 yaml-syntax"],
                      says: "a second YAML document starts here"),
        PlacementCase(name: "two-empty-documents", yaml: "---\n---\n", expected: ["1:1 empty-file", "2:1 multiple-documents"],
                      says: "the manifest's first document is empty"),
        // Aliases.
        PlacementCase(name: "aliased-family", yaml: base(line: 4, "  users: &users") + "  again: *users\n",
                      expected: ["12:10 duplicate-format"],
                      says: "format name 'small' comes again through this alias (family 'again'); it is already used at line 8, column 7 (family 'users')"),
    ]
}

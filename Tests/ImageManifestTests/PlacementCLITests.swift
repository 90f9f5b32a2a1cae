import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Issue 16 through `imagetable validate`: every output names the same `file:line:column` for
/// each case, and the text output shows the line with a caret under that column.
@Suite struct PlacementCLITests {
    /// A directory with every placement case as a file, and `photos` holding one source (an
    /// empty one is a `no-sources` warning).
    private func workspace() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        try dir.write("photos/a.jpg", "")
        try dir.write("photos/-x", "")  // what `include: [-, -x]` (lone-dash) selects
        for placement in PlacementCase.all { try dir.write(placement.fileName, placement.yaml) }
        return dir
    }

    private func validate(_ arguments: [String], in dir: TemporaryDirectory) throws -> ProcessResult {
        try run(Products.imagetable, ["validate"] + arguments + PlacementCase.all.map(\.fileName), in: dir.path)
    }

    /// `line:column code` for each diagnostic line of `output` about `file` that `pattern` matches,
    /// with the pattern's groups: file, line, column, code.
    private func positions(in output: String, of file: String, _ pattern: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        let range = NSRange(output.startIndex..., in: output)
        return regex.matches(in: output, range: range).compactMap { match in
            let group = { (i: Int) in String(output[Range(match.range(at: i), in: output)!]) }
            return group(1) == file ? "\(group(2)):\(group(3)) \(group(4))" : nil
        }
    }

    @Test func textNamesEachPosition() throws {
        let result = try validate([], in: try workspace())
        #expect(result.status == 1)
        for placement in PlacementCase.all {
            let found = try positions(in: result.stdout, of: placement.fileName, #"^([^:\n]+):(\d+):(\d+): (?:error|warning): .* \[([a-z-]+)\]$"#)
            #expect(found == placement.expected, "\(placement.name)")
        }
    }

    @Test func jsonNamesEachPosition() throws {
        let result = try validate(["--format", "json"], in: try workspace())
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let manifests = try #require(document["manifests"] as? [[String: Any]])
        #expect(manifests.count == PlacementCase.all.count)
        for (placement, manifest) in zip(PlacementCase.all, manifests) {
            #expect(manifest["file"] as? String == placement.fileName)
            let diagnostics = manifest["diagnostics"] as? [[String: Any]] ?? []
            let found = diagnostics.map { "\($0["line"] as? Int ?? 0):\($0["column"] as? Int ?? 0) \($0["code"] as? String ?? "")" }
            #expect(found == placement.expected, "\(placement.name)")
        }
    }

    @Test func githubAnnotatesEachPosition() throws {
        let result = try validate(["--format", "github"], in: try workspace())
        for placement in PlacementCase.all {
            let found = try positions(in: result.stdout, of: placement.fileName, #"^::(?:error|warning) file=([^,]+),line=(\d+),col=(\d+),title=([a-z-]+)::"#)
            #expect(found == placement.expected, "\(placement.name)")
        }
    }

    @Test func laxYAMLIsAWarningThatStrictCIMakesAnError() throws {
        let dir = try workspace()
        let lax = PlacementCase.all.filter { $0.expected.allSatisfy { $0.hasSuffix(" lax-yaml") } }.map(\.fileName)
        #expect(lax.count == 6)
        let lenient = try run(Products.imagetable, ["validate"] + lax, in: dir.path)
        #expect(lenient.status == 0, "\(lenient.stdout)")
        let strict = try run(Products.imagetable, ["validate", "--warnings-as-errors"] + lax, in: dir.path)
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("comment-after-quote.yaml:2:17: error: '#' right after a quoted value starts a comment only "
                                       + "for libyaml, since a comment must follow a blank; not valid YAML 1.2: other tools will refuse it; "
                                       + "put a space before the '#' [lax-yaml]\n"))
        #expect(strict.stdout.hasSuffix("6 manifests: 0 valid, 6 invalid\n"))
    }

    @Test func theLineIsShownWithACaretUnderTheColumn() throws {
        let result = try validate([], in: try workspace())
        #expect(result.stdout.contains("""
            unclosed-quote.yaml:2:9: error: YAML syntax error: this quoted value is never closed: the file ends before its closing " [yaml-syntax]
                2 | output: "tables
                  |         ^
            unclosed-quote.yaml: invalid (1 error, 0 warnings)

            """))
        #expect(result.stdout.contains("""
            missing-colon.yaml:5:12: error: YAML syntax error: line 5 has no ':' after its key, so it runs on into line 6, where \
            mapping values are not allowed in this context at 6:12; did you forget ':' after 'sources'? [yaml-syntax]
                5 |     sources photos
                  |            ^
            missing-colon.yaml: invalid (1 error, 0 warnings)

            """))
    }

    /// Escapes, tabs and long lines: the caret stays under the character the column names.
    @Test(arguments: [
        ("output: \"a\u{1B}[2Jb\"\n", "\\"),                                   // a control character: libyaml's reader error
        ("output:\t~/tables\nfamilies: {}\n", "~"),                          // a tab before the column
        ("output: " + String(repeating: "é", count: 300) + ": x\n", ":"),   // a long line, cut around the column
    ])
    func theCaretIsUnderTheColumnsCharacter(_ yaml: String, _ character: Character) throws {
        let dir = try TemporaryDirectory()
        try dir.write("m.yaml", "version: 1\n" + yaml)
        let lines = try run(Products.imagetable, ["validate", "m.yaml"], in: dir.path).stdout.split(separator: "\n").map(String.init)
        let shown = try #require(lines.firstIndex { $0.hasPrefix("    2 | ") })
        let caret = try #require(lines[shown + 1].firstIndex(of: "^"))
        let offset = lines[shown + 1].distance(from: lines[shown + 1].startIndex, to: caret)
        #expect(Array(lines[shown])[offset] == character, "\(lines[shown])\n\(lines[shown + 1])")
        #expect(lines[shown].count <= 8 + 161, "a long line is cut")
        #expect(!lines.joined().contains("\u{1B}"))
    }
}

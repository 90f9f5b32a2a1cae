import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// `schema/manifest.schema.json` and `imagetable validate` agree on a generated set of manifests:
/// one valid manifest, then every field in turn given valid and invalid values (both forms of
/// `size`, of `scales` and of the patterns). The cases the schema cannot express are exactly
/// those listed in docs/MANIFEST.md ("Editors and the JSON Schema"); every other verdict agrees.
///
/// The schema side reads YAML as editors' language servers do, by the YAML 1.2 core schema
/// (PyYAML's own resolvers are YAML 1.1's, where `yes` is a boolean and `1e3` a string).
@Suite struct SchemaParityTests {
    private static let script = """
        import json, math, re, sys, yaml, jsonschema

        class Core(yaml.SafeLoader):
            pass
        Core.yaml_implicit_resolvers = {}
        def resolve(tag, pattern, first):
            Core.add_implicit_resolver("tag:yaml.org,2002:" + tag, re.compile(pattern), list(first))
        resolve("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""])
        resolve("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
        resolve("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789")
        resolve("float", r"^(?:[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$",
                "-+0123456789.")
        resolve("merge", r"^<<$", "<")
        def integer(loader, node):
            text = loader.construct_scalar(node)
            return int(text[2:], 16 if text[1] == "x" else 8) if text[:2] in ("0x", "0o") else int(text, 10)
        def real(loader, node):
            text = loader.construct_scalar(node).lower()
            return math.nan if text == ".nan" else float(text.replace(".inf", "inf"))
        Core.add_constructor("tag:yaml.org,2002:int", integer)
        Core.add_constructor("tag:yaml.org,2002:float", real)
        Core.add_constructor("tag:yaml.org,2002:bool", lambda loader, node: loader.construct_scalar(node).lower() == "true")

        validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1], encoding="utf-8")))
        verdicts = {}
        for path in sys.argv[2:]:
            errors = list(validator.iter_errors(yaml.load(open(path, encoding="utf-8"), Loader=Core)))
            verdicts[path] = errors[0].message[:200] if errors else None
        print(json.dumps(verdicts))
        """

    /// A manifest with one family and one format; a case replaces one of the lines below or adds
    /// lines at the root, the family or the format.
    static func manifest(_ replacements: [String: String] = [:], root: String = "", family: String = "",
                         format: String = "") -> String {
        let lines = ["version": "version: 1", "output": "output: tables", "family": "users", "sources": "sources: photos",
                     "formats": "", "format": "small", "size": "size: 50x50", "style": "style: 16BitBGR",
                     "maximumCount": "maximumCount: 250"].merging(replacements) { $1 }
        var text = lines["version"]! + "\n" + lines["output"]! + "\n" + root + "families:\n"
        text += "  \(lines["family"]!):\n    \(lines["sources"]!)\n" + family
        text += "    formats:\n      \(lines["format"]!):\n"
        for key in ["size", "style", "maximumCount"] where !lines[key]!.isEmpty { text += "        \(lines[key]!)\n" }
        return text + format
    }

    /// Every case: its name (the YAML it changes) and the manifest.
    static let cases: [(name: String, yaml: String)] = {
        var cases: [(String, String)] = [("the base manifest", manifest())]
        func line(_ key: String, _ values: [String]) {
            cases += values.map { ("\(key): \($0)", manifest([key: "\(key): \($0)"])) }
        }
        func familyKey(_ key: String, _ values: [String]) {
            cases += values.map { ("\(key): \($0)", manifest(family: "    \(key): \($0)\n")) }
        }
        func formatKey(_ key: String, _ values: [String]) {
            cases += values.map { ("\(key): \($0)", manifest(format: "        \(key): \($0)\n")) }
        }
        line("version", ["2", "\"1\"", "1.0", "one"])
        line("output", [".", "\"\"", "~/tables", "/tmp/out", "../out", "[tables]"])
        cases.append(("x-note: anything, at the top", manifest(root: "x-note: anything\n")))
        cases.append(("colour: red", manifest(root: "colour: red\n")))
        cases += ["my users", "users.v2", "_users", String(repeating: "u", count: 64)].map { ("family \($0)", manifest(["family": $0])) }
        cases += ["thumb", "small.v2", String(repeating: "s", count: 63)].map { ("format \($0)", manifest(["format": $0])) }
        line("sources", ["pictures", "\"\"", "/photos", "~/photos"])
        familyKey("include", ["\"**/*.jpg\"", "[\"*.jpg\", \"*.png\"]", "[]", "\"**.jpg\"", "\"{a,b\"", "\"../x\"", "\"/abs/*.png\"",
                              "\"a//b\"", "\"photos/\"", "\"[a-\"", "\"{jpg,png}\"", "\"*.[jJ][pP][gG]\"", "\"a}\"", "\"{a,{b}}\"",
                              "'a\\'", "\"[z-a].jpg\"", "\"x**\"", "\"**\"", "\"[!._]*\"", "\"[]\"", "\"[!]\"", "\"[^]\"",
                              "\"[]]\"", "\"[!]]\"", "\"{}\"", "\"{,}\"", "\"{,}.jpg\"", "\"a{,b}\"", "\"x/{a,}\"", "\"{a,}/x\"",
                              "\"[{]\"", "\"[}]\"", "\"{,a}{,b}\"", "\"{[]}\""])
        let alternatives = (0..<65).map { "a\($0)" }.joined(separator: ",")
        cases.append(("include: \"{a0,…,a64}\"", manifest(family: "    include: \"{\(alternatives)}\"\n")))
        familyKey("exclude", ["\"drafts/**\"", "[\"a/*\", \"b/*\"]", "\"./drafts\"", "\"drafts/..\""])
        familyKey("failOn", ["truncated", "warning", "strict", "true"])
        line("size", ["[50, 50]", "\"50x50\"", "050x050", "16384x1", "1x16384", "99999x1", "16385x1", "0x50", "50X50", "50 x 50",
                      "[50]", "[0, 5]", "[16385, 1]", "[50, \"50\"]", "50x50x50", "{w: 5}", "50", "[50.0, 50]"])
        cases.append(("size: 9000x100, scales: [2]", manifest(["size": "size: 9000x100"], format: "        scales: [2]\n")))
        formatKey("scales", ["2", "[1, 2, 3]", "[]", "[0]", "[9]", "[2, 2]", "\"2\"", "[1.5]", "[1.0]"])
        line("style", ["32BitBGRA", "32BitBGR", "8BitGrayscale", "\"16BitBGR\"", "32BitRGBA", "16bitbgr"])
        line("maximumCount", ["1", "1000000", "0", "1000001", "-5", "\"250\"", "0x10", "1e3", "10.0", "1_000", "0o17"])
        cases.append(("no style", manifest(["style": ""])))
        formatKey("protection", ["none", "completeUntilFirstUserAuthentication", "complete", "private"])
        formatKey("fit", ["cover", "contain", "fill", "inside", "stretch"])
        formatKey("crop", ["center", "attention", "entropy", "middle"])
        formatKey("background", ["\"#fff\"", "\"#FFFA\"", "\"#ffffff80\"", "\"#12345678\"", "#fff", "\"#ggg\"", "\"fff\"", "\"#fffff\""])
        formatKey("cornerRadius", ["0", "12.5", "25", "-4", ".inf", ".nan", "26", "\"4\"", "0x10"])
        formatKey("upscale", ["true", "false", "True", "yes", "\"true\"", "1"])
        formatKey("capped", ["true", "false", "yes", "\"true\""])
        formatKey("maximumcount", ["250"])
        formatKey("x-note", ["anything"])
        return cases
    }()

    /// The cases docs/MANIFEST.md lists as beyond the schema: the code-quoted names in the
    /// first column of its table.
    static func documentedExceptions() throws -> Set<String> {
        let doc = try String(contentsOfFile: Repository.manifestDoc, encoding: .utf8)
        let start = try #require(doc.range(of: "| case the schema accepts |"))
        let table = doc[start.upperBound...].prefix { _ in true }
        var names: Set<String> = []
        for row in table.split(separator: "\n").dropFirst().prefix(while: { $0.hasPrefix("|") }) {
            let cell = row.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            names.formUnion(cell.matches(of: /`([^`]+)`/).map { String($0.output.1) })
        }
        return names
    }

    @Test func theSchemaAndTheValidatorAgreeButWhereTheDocumentSaysTheyCannot() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        var paths: [String: String] = [:]
        for (i, c) in Self.cases.enumerated() { paths[c.name] = try dir.write("case\(i).yaml", c.yaml) }
        #expect(paths.count == Self.cases.count, "two cases share a name")
        let result = try run("/usr/bin/env", ["python3", "-c", Self.script, Repository.schema] + Self.cases.map { paths[$0.name]! })
        try #require(result.status == 0, "python3 with jsonschema and yaml is needed (scripts/ensure-deps.sh): \(result.stderr)")
        let verdicts = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        let validator = ManifestValidator(options: ValidationOptions())
        var disagreements: Set<String> = []
        var rejectedByBoth = 0
        for c in Self.cases {
            let path = paths[c.name]!
            let report = validator.validate(fileAt: path)
            let schemaValid = verdicts[path] is NSNull
            if schemaValid != report.isValid {
                disagreements.insert(c.name)
            } else if !report.isValid {
                rejectedByBoth += 1
            }
        }
        // The set is not one-sided: many cases are refused by both, many accepted by both.
        #expect(rejectedByBoth >= 50 && Self.cases.count - rejectedByBoth - disagreements.count >= 30)
        let documented = try Self.documentedExceptions()
        #expect(disagreements.subtracting(documented).isEmpty,
                "the schema and validate disagree on cases docs/MANIFEST.md does not list: \(disagreements.subtracting(documented).sorted())")
        #expect(documented.subtracting(disagreements).isEmpty,
                "docs/MANIFEST.md lists cases on which they agree (or that are not generated): \(documented.subtracting(disagreements).sorted())")
    }
}

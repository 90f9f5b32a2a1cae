import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Keeps `schema/manifest.schema.json` in step with the Swift validator: every example passes
/// both, and every corpus file marked `# schema: reject` fails both (`accept`: passes both).
///
/// The schema side runs Python's `jsonschema` (Draft 2020-12) over PyYAML's reading of each
/// file; `scripts/ensure-deps.sh` installs both.
@Suite struct SchemaTests {
    private static let script = """
        import json, sys, yaml, jsonschema
        schema = json.load(open(sys.argv[1], encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        verdicts = {}
        for path in sys.argv[2:]:
            try:
                errors = list(validator.iter_errors(yaml.safe_load(open(path, encoding="utf-8"))))
                verdicts[path] = errors[0].message[:200] if errors else None
            except yaml.YAMLError as error:
                verdicts[path] = "YAML: " + str(error).splitlines()[0]
        print(json.dumps(verdicts))
        """

    /// The schema's verdict on each file: `nil` when it conforms, else the first error.
    private func schemaVerdicts(_ paths: [String]) throws -> [String: String?] {
        let result = try run("/usr/bin/env", ["python3", "-c", Self.script, Repository.schema] + paths)
        try #require(result.status == 0, "python3 with the jsonschema and yaml modules is needed (scripts/ensure-deps.sh installs them): \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        return object.mapValues { $0 as? String }
    }

    @Test func examplesPassBoth() throws {
        let examples = Repository.exampleManifests
        try #require(examples.count >= 4)
        let verdicts = try schemaVerdicts(examples)
        let validator = ManifestValidator(options: ValidationOptions(root: Repository.root))
        for example in examples {
            #expect(verdicts[example] == .some(nil), "schema rejects \(example): \(String(describing: verdicts[example]))")
            #expect(validator.validate(fileAt: example).isValid, "\(example)")
        }
    }

    @Test func markedCorpusCasesGetTheSameVerdictFromBoth() throws {
        let marked = CorpusCase.all.filter { $0.schemaVerdict != nil }
        try #require(marked.filter { $0.schemaVerdict == "reject" }.count >= 20)
        let verdicts = try schemaVerdicts(marked.map(\.path))
        for corpusCase in marked {
            let swiftValid = ManifestValidator().validate(fileAt: corpusCase.path).isValid
            let schemaValid = verdicts[corpusCase.path] == .some(nil)
            let expectValid = corpusCase.schemaVerdict == "accept"
            #expect(swiftValid == expectValid, "Swift on \(corpusCase.name)")
            #expect(schemaValid == expectValid, "schema on \(corpusCase.name): \(String(describing: verdicts[corpusCase.path]))")
        }
    }

    @Test func schemaListsEveryKeyTheValidatorKnows() throws {
        let schema = try String(contentsOfFile: Repository.schema, encoding: .utf8)
        for key in ManifestReader.rootKeys + ManifestReader.familyKeys + FormatReader.keys {
            #expect(schema.contains("\"\(key)\""), "\(key)")
        }
    }
}

/// The examples in `manifests/`: valid, and ready for editors.
@Suite struct ExampleTests {
    @Test(arguments: Repository.exampleManifests)
    func exampleIsValidWithTheRepositoryAsRoot(_ path: String) throws {
        let report = ManifestValidator(options: ValidationOptions(root: Repository.root)).validate(fileAt: path)
        #expect(report.isValid)
        // Their sources may not be fetched yet; nothing else may be wrong.
        #expect(report.diagnostics.allSatisfy { $0.code == .missingSources }, "\(report.diagnostics.map(\.description))")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# yaml-language-server: $schema=../schema/manifest.schema.json\n"))
    }
}

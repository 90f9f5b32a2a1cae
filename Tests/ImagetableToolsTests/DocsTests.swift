import Foundation
import ImageTableCore
import TestSupport
import Testing

/// docs/CLI.md stays in step with the commands: every option `--help` lists and every JSON
/// field the table commands emit is documented in the command's section.
struct DocsTests {
    static let commands = ["validate", "bake", "export", "merge", "inspect", "verify", "extract", "preview", "version"]

    /// The text of `## command` up to the next `## ` heading.
    private func section(_ command: String) throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/CLI.md").standardized.path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: "\n## \(command)\n"), "docs/CLI.md has no section for \(command)")
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    @Test(arguments: commands)
    func everyOptionIsDocumented(command: String) throws {
        let help = try imagetable(command, "--help")
        #expect(help.status == 0)
        // Every option the help lists: the usage line, or (when it says `[<options>]`) the
        // OPTIONS section, where each line starts with its flags.
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let listed = lines.drop { !$0.hasPrefix("OPTIONS:") }.filter { $0.hasPrefix("  -") }
            .flatMap { $0.split(separator: " ").prefix { $0.hasPrefix("-") || $0.hasPrefix("<") } }
            .flatMap { $0.split(separator: "/") }  // `--captions/--no-captions`
        let usage = try #require(lines.first { $0.hasPrefix("USAGE:") })
        let options = Set((usage.split(separator: " ") + listed).compactMap { word -> String? in
            let option = word.trimmingCharacters(in: CharacterSet(charactersIn: "[]<>,"))
            return option.hasPrefix("--") ? option : nil
        })
        #expect(!options.isEmpty)
        let doc = try section(command)
        // `--help` and `--version` are every command's; Conventions documents them.
        for option in options where option != "--help" && option != "--version" {
            // `--no-progress` may be documented as `--[no-]progress`.
            let base = option.replacingOccurrences(of: "--no-", with: "--")
            #expect(doc.contains("`\(option)") || doc.contains(option + " ") || doc.contains(base.replacingOccurrences(of: "--", with: "--[no-]")),
                    "\(option) of \(command) is not in docs/CLI.md")
        }
    }

    /// Every code `ImageTableError` can carry has a row in "Error codes".
    @Test func everyErrorCodeIsDocumented() throws {
        let doc = try section("Conventions")
        let table = try #require(doc.range(of: "### Error codes").map { String(doc[$0.upperBound...]) })
        for code in ImageTableError.Code.allCases {
            #expect(table.contains("`\(code.rawValue)`"), "\(code.rawValue) is not in docs/CLI.md, Error codes")
        }
    }

    @Test func everyJSONFieldIsDocumented() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, keys: ["a", "b"])
        try flipByte(in: table.path, at: try table.descriptor.layout().slotOffset(1))
        for command in ["inspect", "verify"] {
            let run = try imagetable(command, table.path, scratch.file("missing"), "--format", "json")
            let document = try JSONSerialization.jsonObject(with: run.output)
            let doc = try section(command)
            for key in keys(of: document) {
                // `key`, `parent.key`, `key[]` (an array) or `key.field` (an object).
                let documented = ["`\(key)`", ".\(key)`", "`\(key)[]", "`\(key).", "\"\(key)\""].contains { doc.contains($0) }
                #expect(documented,
                        "\(command)'s JSON field \(key) is not in docs/CLI.md")
            }
        }
    }

    private func keys(of value: Any) -> Set<String> {
        if let object = value as? [String: Any] {
            return object.reduce(into: Set(object.keys)) { $0.formUnion(keys(of: $1.value)) }
        }
        if let array = value as? [Any] { return array.reduce(into: Set()) { $0.formUnion(keys(of: $1)) } }
        return []
    }
}

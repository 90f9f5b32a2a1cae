import Foundation
import TestSupport
import Testing

/// Every command's `--help`, rendered as a terminal of 80 columns and a very wide one would show
/// it: nothing over 80 columns, nothing that ArgumentParser had to wrap again (which leaves a
/// word or two on a line of its own), no option text that ends in a lone word, and examples.
@Suite struct HelpTextTests {
    static let commands = [[]] + DocsTests.commands.map { [$0] }

    private func help(_ command: [String], columns: Int) throws -> String {
        let result = try run(Products.imagetable, command + ["--help"], environment: ["COLUMNS": "\(columns)", "LINES": "50"])
        #expect(result.status == 0)
        return result.stdout
    }

    @Test(arguments: commands)
    func helpFitsEightyColumnsWithoutOrphans(command: [String]) throws {
        let narrow = try help(command, columns: 80)
        let lines = narrow.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            #expect(line.count <= 80, "\(command): \(line.count) columns: \(line)")
        }
        // The overview and discussion come out as written: ArgumentParser did not wrap them.
        let wide = try help(command, columns: 300)
        let prose = { (text: String) in text.components(separatedBy: "\nUSAGE:").first ?? "" }
        #expect(prose(narrow) == prose(wide), "\(command): the text above USAGE was wrapped again at 80 columns")
        #expect(prose(narrow).split(separator: "\n").count > 3)
        // A word alone under a line of text is the end of a sentence that did not fit.
        let proseLines = prose(narrow).split(separator: "\n", omittingEmptySubsequences: false)
        for (previous, line) in zip(proseLines, proseLines.dropFirst()) {
            let words = line.split(separator: " ")
            let heading = words.count == 1 && (line == line.uppercased() || line.hasSuffix(":"))
            #expect(words.count != 1 || heading || previous.allSatisfy(\.isWhitespace), "\(command): a lone word: \(line)")
        }
        // Option descriptions continue at column 27; a continuation of one word is an orphan.
        let continuation = String(repeating: " ", count: 26)
        for line in lines where line.hasPrefix(continuation) {
            #expect(line.split(separator: " ").count > 1, "\(command): a lone word: \(line)")
        }
        #expect(narrow.contains("\nEXAMPLES\n  imagetable "), "\(command) has no EXAMPLES")
        #expect(narrow.contains("\nEXIT STATUS\n  0 "), "\(command) has no EXIT STATUS")
    }

    @Test func theUsageOfValidateNamesItsRequiredManifest() throws {
        let usage = try help(["validate"], columns: 80).split(separator: "\n").first { $0.hasPrefix("USAGE:") }
        #expect(usage == "USAGE: imagetable validate [<options>] <manifest> ...")
        let none = try run(Products.imagetable, ["validate"])
        #expect(none.status == 64 && none.stderr.hasPrefix("Error: Missing expected argument '<manifest> ...'"))
    }

    @Test func versionIsPrintedAlsoAsJSON() throws {
        let version = try run(Products.imagetable, ["--version"])
        #expect(version.status == 0)
        let semantic = try #require(version.stdout.wholeMatch(of: /(\d+)\.(\d+)\.(\d+)\n/))
        let json = try run(Products.imagetable, ["version", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        #expect(document["imagetable"] as? String == String(version.stdout.dropLast()))
        #expect(document["version"] as? Int == 1 && document["tableFormat"] as? Int == 2)
        #expect(document["rendering"] as? Int != nil && document["workerProtocol"] as? Int != nil)
        let text = try run(Products.imagetable, ["version"])
        #expect(text.stdout.hasPrefix("imagetable \(semantic.output.0)"))
        // CHANGELOG.md's latest release is this version.
        let changelog = try String(contentsOfFile: Checkout.file("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("\n## \(String(version.stdout.dropLast()))"), "CHANGELOG.md has no section for this version")
        // docs/CLI.md shows what `imagetable version` prints.
        let cli = try String(contentsOfFile: Checkout.file("docs/CLI.md"), encoding: .utf8)
        #expect(cli.contains("```\n" + text.stdout + "```\n"), "docs/CLI.md's version example is not what it prints")
        // And its JSON example (its rendering version had stayed behind the text's).
        let line = try #require(cli.split(separator: "\n").first { $0.hasPrefix("| `--format json` | `{\"version\"") })
        let example = try #require(line.split(separator: "`").first { $0.hasPrefix("{") })
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])
        #expect(NSDictionary(dictionary: shown).isEqual(to: document), "docs/CLI.md's JSON example is not what it prints: \(example)")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsNameEveryCommand(shell: String) throws {
        let script = try run(Products.imagetable, ["--generate-completion-script", shell])
        #expect(script.status == 0)
        for command in DocsTests.commands { #expect(script.stdout.contains(command), "\(shell): \(command)") }
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageManifest

/// Runs the built `imagetable validate` as CI would, checking output and exit status in every format.
@Suite struct CLITests {
    static let validYAML = """
        version: 1
        output: tables
        families:
          users:
            sources: photos
            formats:
              small:
                size: 50x50
                scales: [2]
                style: 16BitBGR
                maximumCount: 250

        """
    private static let invalidYAML = validYAML.replacingOccurrences(of: "16BitBGR", with: "32BitRGBA")
    private static let warningYAML = validYAML + "        fit: fill\n        crop: entropy\n"

    /// A directory with `valid.yaml`, `invalid.yaml`, `warning.yaml` and a `photos` directory
    /// holding one source (an empty one is a `no-sources` warning).
    private func workspace() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        try dir.write("photos/a.jpg", "")
        try dir.write("valid.yaml", Self.validYAML)
        try dir.write("invalid.yaml", Self.invalidYAML)
        try dir.write("warning.yaml", Self.warningYAML)
        return dir
    }

    private func validate(_ arguments: [String], in dir: TemporaryDirectory) throws -> ProcessResult {
        try run(Products.imagetable, ["validate"] + arguments, in: dir.path)
    }

    @Test func textForAValidManifest() throws {
        let dir = try workspace()
        let result = try validate(["valid.yaml"], in: dir)
        #expect(result.status == 0)
        // 100 px × 2 B = 200, padded to 256 a row; × 100 rows = 25,600, padded to 28,672 a slot;
        // the records (512 + 250 × 256 = 64,512) and 2 × 512 buckets of 8 bytes pad to 73,728;
        // 73,728 + 250 × 28,672 = 7,241,728.
        #expect(result.stdout == """
            valid.yaml: valid (0 errors, 0 warnings)
              table                family  pixels   style     bytes/row  slot bytes  count  max size
              small@2x.imagetable  users   100x100  16BitBGR        256       28672    250   6.9 MiB
              total: 1 table, at most 6.9 MiB (7241728 bytes) on disk

            """)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/tables"), "validate must not create tables")
    }

    @Test func textForAnInvalidManifest() throws {
        let result = try validate(["invalid.yaml"], in: try workspace())
        #expect(result.status == 1)
        #expect(result.stdout == """
            invalid.yaml:10:16: error: unknown style '32BitRGBA'; did you mean '32BitBGRA'? [unknown-style]
               10 |         style: 32BitRGBA
                  |                ^
            invalid.yaml: invalid (1 error, 0 warnings)

            """)
    }

    @Test func jsonDocument() throws {
        let result = try validate(["--format", "json", "valid.yaml", "invalid.yaml"], in: try workspace())
        #expect(result.status == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(document["valid"] as? Bool == false)
        #expect(document["errorCount"] as? Int == 1)
        #expect(document["warningCount"] as? Int == 0)
        #expect(document["totalMaxBytes"] as? Int == 7_241_728)
        let manifests = try #require(document["manifests"] as? [[String: Any]])
        #expect(manifests.map { $0["file"] as? String } == ["valid.yaml", "invalid.yaml"])
        let table = try #require((manifests[0]["tables"] as? [[String: Any]])?.first)
        #expect(table as NSDictionary == [
            "format": "small", "family": "users", "scale": 2, "file": "tables/small@2x.imagetable", "pixelWidth": 100,
            "pixelHeight": 100, "style": "16BitBGR", "bytesPerRow": 256, "slotBytes": 28672, "maximumCount": 250, "maxBytes": 7_241_728,
        ] as NSDictionary)
        let diagnostic = try #require((manifests[1]["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic as NSDictionary == [
            "severity": "error", "code": "unknown-style", "message": "unknown style '32BitRGBA'; did you mean '32BitBGRA'?",
            "file": "invalid.yaml", "line": 10, "column": 16, "keyPath": "families.users.formats.small.style",
        ] as NSDictionary)
        #expect(manifests[1]["valid"] as? Bool == false)
        #expect((manifests[1]["tables"] as? [Any])?.isEmpty == true)
    }

    @Test func githubAnnotations() throws {
        let dir = try workspace()
        let invalid = try validate(["--format", "github", "invalid.yaml"], in: dir)
        #expect(invalid.status == 1)
        #expect(invalid.stdout.hasPrefix(
            "::error file=invalid.yaml,line=10,col=16,title=unknown-style::unknown style '32BitRGBA'; did you mean '32BitBGRA'?\n"))
        let warning = try validate(["--format", "github", "warning.yaml"], in: dir)
        #expect(warning.status == 0)
        #expect(warning.stdout.hasPrefix(
            "::warning file=warning.yaml,line=13,col=9,title=crop-without-cover::'crop' has no effect with fit 'fill'; it only applies to 'cover'\n"
                + "warning.yaml: valid (0 errors, 1 warning)\n  table "))
    }

    @Test func warningsAsErrors() throws {
        let dir = try workspace()
        #expect(try validate(["warning.yaml"], in: dir).status == 0)
        let strict = try validate(["--warnings-as-errors", "warning.yaml"], in: dir)
        #expect(strict.status == 1)
        #expect(strict.stdout.hasPrefix("warning.yaml:13:9: error: 'crop' has no effect"))
    }

    /// A family that selects no file (an empty directory, or `include: "*.jpeg"` over `.jpg`
    /// files) is a warning at its `sources`, naming the patterns: its empty tables passed.
    @Test func aFamilyWithNoSourcesIsAWarning() throws {
        let dir = try workspace()
        try dir.makeDirectory("empty")
        try dir.write("empty.yaml", Self.validYAML.replacingOccurrences(of: "sources: photos", with: "sources: empty"))
        let empty = try validate(["empty.yaml"], in: dir)
        #expect(empty.status == 0)
        #expect(empty.stdout.hasPrefix("empty.yaml:5:14: warning: family 'users' has no sources: no file in 'empty' matches the image "
                                       + "file names; nothing is baked for it (check 'sources' and 'include') [no-sources]\n"), "\(empty.stdout)")
        try dir.write("pattern.yaml", Self.validYAML.replacingOccurrences(of: "sources: photos", with: "sources: photos\n    include: \"*.jpeg\""))
        let pattern = try validate(["--warnings-as-errors", "pattern.yaml"], in: dir)
        #expect(pattern.status == 1)
        #expect(pattern.stdout.hasPrefix("pattern.yaml:5:14: error: family 'users' has no sources: no file in 'photos' matches '*.jpeg'; "),
                "\(pattern.stdout)")
        // `*.JPG` over `.jpg` files: written patterns match case exactly, which is said.
        try dir.write("cased.yaml", Self.validYAML.replacingOccurrences(of: "sources: photos", with: "sources: photos\n    include: \"*.JPG\""))
        #expect(try validate(["cased.yaml"], in: dir).stdout.contains("nothing is baked for it (check 'sources' and 'include'; a pattern "
                                                                      + "matches letters in their case only) [no-sources]\n"))
        #expect(try validate(["valid.yaml"], in: dir).stdout.hasPrefix("valid.yaml: valid (0 errors, 0 warnings)"), "one source is enough")
    }

    /// Images a family selects in an output directory inside its sources are never baked (a bake
    /// does not scan its output): validate warns of them at the family's `sources`, as the bake
    /// does, where it said the manifest was valid with no warning.
    @Test func imagesInTheOutputDirectoryAreAWarning() throws {
        let dir = try workspace()
        try dir.makeDirectory("photos/tables")
        try dir.write("photos/tables/b.jpg", "")
        try dir.write("photos/tables/small@2x.imagetable", "")
        try dir.write("inside.yaml", Self.validYAML.replacingOccurrences(of: "output: tables", with: "output: photos/tables"))
        let inside = try validate(["inside.yaml"], in: dir)
        #expect(inside.status == 0)
        #expect(inside.stdout.hasPrefix("inside.yaml:5:14: warning: the output directory 'photos/tables' lies inside the sources of family "
                                        + "'users' and holds 1 image its patterns select ('tables/b.jpg'); the output directory is never "
                                        + "scanned, so it is not baked: move it out of the output directory, or give the manifest another output "
                                        + "[output-holds-sources]\n"), "\(inside.stdout)")
        #expect(try validate(["--warnings-as-errors", "inside.yaml"], in: dir).status == 1)
        // Tables alone there are no warning.
        try FileManager.default.removeItem(atPath: dir.file("photos/tables/b.jpg"))
        #expect(try validate(["inside.yaml"], in: dir).stdout.hasPrefix("inside.yaml: valid (0 errors, 0 warnings)"))
    }

    @Test func maxDisk() throws {
        let dir = try workspace()
        #expect(try validate(["--max-disk", "7241728", "valid.yaml"], in: dir).status == 0)
        #expect(try validate(["--max-disk", "7MiB", "valid.yaml"], in: dir).status == 0)
        let over = try validate(["--max-disk", "7MB", "valid.yaml"], in: dir)
        #expect(over.status == 1)
        // Over the budget alone, the plan still shows which tables take the space.
        #expect(over.stdout == """
            valid.yaml:3:1: error: the tables may grow to 6.9 MiB (7241728 bytes), over the --max-disk budget of 6.7 MiB (7000000 bytes) [disk-budget-exceeded]
                3 | families:
                  | ^
            valid.yaml: invalid (1 error, 0 warnings)
              table                family  pixels   style     bytes/row  slot bytes  count  max size
              small@2x.imagetable  users   100x100  16BitBGR        256       28672    250   6.9 MiB
              total: 1 table, at most 6.9 MiB (7241728 bytes) on disk

            """)
        let json = try validate(["--max-disk", "7MB", "--format", "json", "valid.yaml", "invalid.yaml"], in: dir)
        let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let manifests = try #require(document["manifests"] as? [[String: Any]])
        #expect(document["valid"] as? Bool == false && document["totalMaxBytes"] as? Int == 0)
        #expect((manifests[0]["tables"] as? [Any])?.count == 1 && manifests[0]["totalMaxBytes"] as? Int == 7241728)
        #expect((manifests[1]["tables"] as? [Any])?.isEmpty == true && manifests[1]["totalMaxBytes"] as? Int == 0)
        // With another error besides, there is no plan.
        let both = try validate(["--max-disk", "1", "invalid.yaml"], in: dir)
        #expect(both.status == 1 && !both.stdout.contains("table "))
        // Bad sizes say what a size is: `-5` read as a missing value, `2XB` as "invalid".
        for bad in ["-5", "2XB"] {
            let refused = try validate(["--max-disk", bad, "valid.yaml"], in: dir)
            #expect(refused.status == 64 && refused.stderr.contains("--max-disk must be a size such as 500MB or 2GiB "
                                                                    + "(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), not '\(bad)'"), "\(refused.stderr)")
        }
    }

    @Test func outsidePathsAndRoot() throws {
        let dir = try workspace()
        try dir.write("sub/m.yaml", Self.validYAML.replacingOccurrences(of: "sources: photos", with: "sources: ../photos"))
        #expect(try validate(["sub/m.yaml"], in: dir).status == 1)
        #expect(try validate(["--root", ".", "sub/m.yaml"], in: dir).status == 0)
        #expect(try validate(["--allow-outside-paths", "sub/m.yaml"], in: dir).status == 0)
    }

    @Test func severalManifestsAreSummarised() throws {
        let result = try validate(["valid.yaml", "invalid.yaml", "missing.yaml"], in: try workspace())
        #expect(result.status == 1)
        #expect(result.stdout.contains("missing.yaml:1:1: error: cannot open the manifest: No such file or directory [file-unreadable]\n"))
        #expect(result.stdout.hasSuffix("3 manifests: 1 valid, 2 invalid\n"))
    }

    @Test(arguments: [[], ["--format", "xml", "valid.yaml"], ["--max-disk", "lots", "valid.yaml"], ["--frobnicate", "valid.yaml"],
                      ["--root", "nowhere", "valid.yaml"], ["--root", "valid.yaml", "valid.yaml"]])
    func badUsageExits64(_ arguments: [String]) throws {
        let result = try validate(arguments, in: try workspace())
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("Usage: imagetable validate"))
    }

    /// A `--root` that is not a directory is the option's mistake, said once: every path of
    /// every manifest failed as "outside the root" instead.
    @Test func aRootThatIsNotADirectoryIsBadUsage() throws {
        let dir = try workspace()
        let missing = try validate(["--root", "nowhere", "valid.yaml"], in: dir)
        #expect(missing.stderr.hasPrefix("Error: --root nowhere: no such directory.\n"), "\(missing.stderr)")
        let file = try run(Products.imagetable, ["bake", "--root", "valid.yaml", "valid.yaml"], in: dir.path)
        #expect(file.status == 64 && file.stderr.hasPrefix("Error: --root valid.yaml is not a directory.\n"), "\(file.stderr)")
        let export = try run(Products.imagetable, ["export", "--root", "nowhere", "valid.yaml", "--to", "out"], in: dir.path)
        #expect(export.status == 64 && export.stderr.contains("--root nowhere: no such directory."), "\(export.stderr)")
    }

    /// A byte that is not UTF-8 is shown in its line, as U+FFFD, with the caret under it, as
    /// every other diagnostic's line is (it had no line at all).
    @Test func aByteThatIsNotUTF8IsShownInItsLine() throws {
        let dir = try workspace()
        try Data(Array("version: 1\noutput: caf".utf8) + [0xE9] + Array("s\nfamilies: {}\n".utf8))
            .write(to: URL(fileURLWithPath: dir.path + "/latin1.yaml"))
        let result = try validate(["latin1.yaml"], in: dir)
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("latin1.yaml:2:12: error: byte 0xE9 at offset 22 is not valid UTF-8; save the manifest as UTF-8 [invalid-utf8]\n"
                                        + "    2 | output: caf\u{FFFD}s\n      |            ^\n"), "\(result.stdout)")
        // Lines ended by CR alone, which the position counts as libyaml does (it showed no line).
        try Data(Array("version: 1\routput: caf".utf8) + [0xE9] + Array("s\rfamilies: {}\r".utf8))
            .write(to: URL(fileURLWithPath: dir.path + "/cr.yaml"))
        let cr = try validate(["cr.yaml"], in: dir)
        #expect(cr.stdout.contains("cr.yaml:2:12: error: byte 0xE9 at offset 22 is not valid UTF-8; save the manifest as UTF-8 [invalid-utf8]\n"
                                   + "    2 | output: caf\u{FFFD}s\n      |            ^\n"), "\(cr.stdout)")
    }

    /// `imagetable bak site.yaml` was "2 unexpected arguments", where a mistyped option gets a
    /// suggestion.
    @Test func aMistypedCommandGetsASuggestion() throws {
        let typo = try run(Products.imagetable, ["bak", "site.yaml"])
        #expect(typo.status == 64 && typo.stdout.isEmpty)
        #expect(typo.stderr.hasPrefix("Error: unknown command 'bak'; did you mean 'bake'?\nUsage: imagetable <command> [<options>] (commands: validate, bake,"),
                "\(typo.stderr)")
        let unknown = try run(Products.imagetable, ["xyzzy"])
        #expect(unknown.status == 64 && unknown.stderr.hasPrefix("Error: unknown command 'xyzzy'\n"), "\(unknown.stderr)")
        #expect(try run(Products.imagetable, ["help", "bake"]).status == 0)
    }

    /// The disk budget does not stop the sources from being counted: with it the only error,
    /// the `no-sources` warning vanished ("invalid (1 error, 0 warnings)").
    @Test func sourcesAreCountedBesideADiskBudgetError() throws {
        let dir = try TemporaryDirectory()
        try dir.makeDirectory("photos")
        try dir.write("valid.yaml", Self.validYAML)
        let result = try validate(["valid.yaml", "--max-disk", "1kB"], in: dir)
        #expect(result.status == 1 && result.stdout.contains("[disk-budget-exceeded]") && result.stdout.contains("[no-sources]")
                && result.stdout.contains("valid.yaml: invalid (1 error, 1 warning)"), "\(result.stdout)")
    }

    @Test func noSubcommandIsBadUsage() throws {
        let result = try run(Products.imagetable, [])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("Error: no subcommand: name one of validate, bake,"))
        #expect(result.stderr.contains("Usage: imagetable <subcommand>"))
        // Asking for the help is not an error.
        let help = try run(Products.imagetable, ["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("SUBCOMMANDS:"))
    }

    @Test func helpDocumentsTheExitStatuses() throws {
        let result = try run(Products.imagetable, ["validate", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("0   every manifest is valid"))
        #expect(result.stdout.contains("64  bad usage"))
        #expect(result.stdout.contains("--warnings-as-errors"))
    }

    /// `validate -` reads the manifest from standard input (another program's output): its paths
    /// are relative to the working directory, and its diagnostics are named `<stdin>`.
    @Test func aManifestOnStandardInput() throws {
        let dir = try workspace()
        func piped(_ file: String, _ extra: String = "") throws -> ProcessResult {
            try run("/bin/sh", ["-c", "'\(Products.imagetable)' validate - \(extra) < \(file)"], in: dir.path)
        }
        let valid = try piped("valid.yaml")
        #expect(valid.status == 0 && valid.stdout.hasPrefix("<stdin>: valid"), "\(valid.stdout)\(valid.stderr)")
        let invalid = try piped("invalid.yaml")
        #expect(invalid.status == 1 && invalid.stdout.contains("<stdin>:10:16: error: unknown style '32BitRGBA'"), "\(invalid.stdout)")
        let json = try piped("valid.yaml", "--format json")
        let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        #expect((document["manifests"] as? [[String: Any]])?.first?["file"] as? String == "<stdin>")
        let twice = try run(Products.imagetable, ["validate", "-", "-"], in: dir.path)
        #expect(twice.status == 64 && twice.stderr.contains("'-' (the manifest on standard input) may be given once."))
    }
}

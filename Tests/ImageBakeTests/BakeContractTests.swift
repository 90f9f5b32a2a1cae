import Foundation
import TestSupport
import Testing

/// What docs/CLI.md promises of `imagetable bake` that no other test ran: the `key-too-long`
/// failure, `--list --format json`'s document, and `--shard` values that are bad usage.
@Suite struct BakeContractTests {
    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        return project
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A key over 160 bytes cannot be stored: the source fails as `key-too-long` (exit 3), the
    /// others bake.
    @Test func aKeyOverTheLimitFailsAsKeyTooLong() throws {
        let project = try Self.project()
        let long = String(repeating: "k", count: 170) + ".jpg"
        try project.add(long, from: Corpus.photo("Landscape_2"))
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect(run.status == 3, "\(run.stderr)")
        let document = try Self.json(run.stdout)
        let failures = try #require(document["failures"] as? [[String: Any]])
        #expect(failures.count == 1 && failures[0]["code"] as? String == "key-too-long" && failures[0]["key"] as? String == long,
                "\(failures)")
        #expect(failures.first?["message"] as? String == "path is 174 bytes; keys are limited to 160")
        #expect((document["sources"] as? [String: Int])?["decoded"] == 1)
    }

    /// `--list --format json` prints `{"version": 1, "sources": [{"family", "key", "status"}]}`
    /// and touches nothing.
    @Test func listAsJSONIsTheDocumentedDocument() throws {
        let project = try Self.project()
        _ = try project.bake()
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let document = try Self.json(run.stdout)
        #expect(Set(document.keys) == ["version", "sources"] && document["version"] as? Int == 1)
        let sources = try #require(document["sources"] as? [[String: String]])
        #expect(sources == [["family": "photos", "key": "a.jpg", "status": "unchanged"],
                            ["family": "photos", "key": "b.jpg", "status": "new"]], "\(sources)")
        #expect(try project.bake().decoded == 1, "the listing baked nothing")
    }

    /// A listing that stops keeps the listing's shape: it printed a bake's document, whose
    /// `sources` is an object of counts, so `.sources[]` broke a job before it read the status.
    @Test func aListingThatStopsKeepsItsShape() throws {
        let project = try Self.project()
        let unreadable = project.root + "/elsewhere.yaml"
        try "version: 1\noutput: other\nfamilies:\n  photos:\n    sources: src\n    formats:\n      t: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n"
            .write(toFile: unreadable, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: project.root + "/other/t.imagetable", withIntermediateDirectories: true)
        let invalid = project.root + "/invalid.yaml"
        try "version: 1\nfamilies: [\n".write(toFile: invalid, atomically: true, encoding: .utf8)
        for (manifest, code) in [(unreadable, "is-a-directory"), (invalid, "invalid-manifest")] {
            let run = try run(Products.imagetable, ["bake", manifest, "--list", "--format", "json"])
            #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
            let document = try Self.json(run.stdout)
            #expect(Set(document.keys) == ["version", "sources", "diagnostics", "fatal"], "\(document)")
            #expect((document["sources"] as? [Any])?.isEmpty == true && (document["fatal"] as? [String: Any])?["code"] as? String == code,
                    "\(document)")
            #expect((document["diagnostics"] as? [Any])?.isEmpty == (code != "invalid-manifest"), "\(document)")
        }
        // A dry run stops where the bake stops: it planned the directory as an empty table.
        for extra in [["--dry-run"], []] {
            let run = try run(Products.imagetable, ["bake", unreadable, "--no-progress"] + extra)
            #expect(run.status == 1 && run.stderr.contains("[is-a-directory]"), "\(extra): \(run.stdout)\(run.stderr)")
        }
    }

    /// `--list --strict` stops where the bake and `--dry-run --strict` stop, at a failure known
    /// before decoding (exit 1, `fatal`); it listed and exited 0.
    @Test func aStrictListingStopsAtAKnownFailure() throws {
        let project = try Self.project()
        project.add("empty.jpg", bytes: [])
        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--strict", "--format", "json"])
        let document = try Self.json(json.stdout)
        #expect(json.status == 1 && (document["fatal"] as? [String: Any])?["code"] as? String == "source-failed", "\(document)")
        #expect((document["sources"] as? [[String: String]])?.count == 2, "\(document)")
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--strict"])
        #expect(text.status == 1 && text.stderr.contains("[source-failed]"), "\(text.stderr)")
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--list"]).status == 0)
    }

    /// `--list` names the files that fail before any decode, which the scan rejects (a link
    /// that leads outside the sources, a name that is not UTF-8): `failed`, with why. The JSON
    /// listing left them out, and text gave them only as errors on standard error.
    @Test func listNamesTheFilesTheScanRejects() throws {
        let project = try Self.project()
        let outside = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_2"), toPath: outside.file("o.jpg"))
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/link.jpg", withDestinationPath: outside.file("o.jpg"))
        let name = (Array((project.sources + "/bad").utf8) + [0xFF] + Array(".jpg".utf8) + [0]).map { CChar(bitPattern: $0) }
        let fd = name.withUnsafeBufferPointer { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
        #expect(fd >= 0)
        close(fd)
        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"])
        let sources = try #require(try Self.json(json.stdout)["sources"] as? [[String: String]])
        #expect(sources == [["family": "photos", "key": "a.jpg", "status": "new"],
                            ["family": "photos", "key": "bad\\xFF.jpg", "status": "failed", "failure": "name-not-utf8"],
                            ["family": "photos", "key": "link.jpg", "status": "failed", "failure": "outside-sources"]], "\(sources)")
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(text.stdout.contains("failed    photos  link.jpg  (fails: outside-sources)\n"), "\(text.stdout)")
        #expect(text.stderr.hasSuffix("3 listed: 1 new, 2 failed\n"), "\(text.stderr)")

        // A file named with a backslash, `x`, `F`, `F` reads as the name that is not UTF-8: both
        // are listed (the second had hidden the failure).
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_2"), toPath: project.sources + "/bad\\xFF.jpg")
        let both = try #require(try Self.json(try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"]).stdout)["sources"]
            as? [[String: String]])
        #expect(both.filter { $0["key"] == "bad\\xFF.jpg" }.map { $0["status"] } == ["new", "failed"], "\(both)")
        let lines = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(lines.stdout.contains("failed    photos  bad\\xFF.jpg  (fails: name-not-utf8)\n"), "\(lines.stdout)")
        #expect(lines.stderr.hasSuffix("4 listed: 2 new, 2 failed\n"), "\(lines.stderr)")
    }

    /// A pattern matches case and spelling exactly: `**/*.jpg` left `IMG.JPG` and `b.jpeg` out
    /// without a word (phone photos end in `.JPG`). They are skipped with a warning that says
    /// what to write; a file an `exclude` pattern names, and other formats, are not.
    @Test func imagesWhoseExtensionIsSpeltOtherwiseAreNamed() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10), include: "**/*.jpg")
        try project.editManifest { $0.replacingOccurrences(of: "    include: [\"**/*.jpg\"]\n", with: "    include: [\"**/*.jpg\"]\n    exclude: [\"drafts/**\"]\n") }
        for key in ["a.jpg", "IMG.JPG", "sub/b.jpeg", "drafts/c.JPG", "d.png"] { try project.add(key, from: Corpus.photo("Landscape_1")) }
        let list = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(list.status == 0 && list.stdout == "skipped   photos  IMG.JPG  (extension-spelling)\nnew       photos  a.jpg\n"
                + "skipped   photos  sub/b.jpeg  (extension-spelling)\n", "\(list.stdout)")
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(bake.status == 0 && bake.stderr.contains("\(project.sources)/IMG.JPG: warning: the patterns take '*.jpg' but not '*.JPG' "
                + "(they match case and spelling exactly); to take it, spell both in the include pattern, as in '*.{jpg,JPG}' "
                + "[extension-spelling]"), "\(bake.stderr)")
        #expect(!bake.stderr.contains("c.JPG") && !bake.stderr.contains("d.png"))
        // Another family over the same sources that takes the other spelling: no warning.
        try project.editManifest { $0 + "  originals:\n    sources: src\n    include: [\"**/*.JPG\", \"**/*.jpeg\"]\n    formats:\n"
            + "      big:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 10\n" }
        let split = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"])
        #expect(split.status == 0 && !split.stderr.contains("extension-spelling"), "\(split.stderr)")
    }

    /// `--list` names the files the bake skips with a warning, each once, with why: one that is
    /// not an image by its first bytes, a hidden image, a FIFO (it listed the first as failing
    /// and the other two not at all, though the bake reports all three as skipped).
    @Test func listNamesTheFilesTheBakeSkips() throws {
        let project = try Self.project()
        project.add("notes.jpg", bytes: Array("not a picture\n".utf8))
        try project.add(".hidden.jpg", from: Corpus.photo("Landscape_2"))
        #expect(mkfifo(project.sources + "/pipe.jpg", 0o644) == 0)
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines == [["skipped", "photos", ".hidden.jpg", "(hidden-file)"], ["new", "photos", "a.jpg"],
                          ["skipped", "photos", "notes.jpg", "(not-an-image)"], ["skipped", "photos", "pipe.jpg", "(not-a-regular-file)"]],
                "\(text.stdout)")
        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"])
        let sources = try #require(try Self.json(json.stdout)["sources"] as? [[String: String]])
        #expect(sources.filter { $0["status"] == "skipped" }.map { $0["key"]! + " " + $0["skipped"]! }
                == [".hidden.jpg hidden-file", "notes.jpg not-an-image", "pipe.jpg not-a-regular-file"], "\(sources)")
        // The bake itself counts the same three as skipped.
        let bake = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect((try Self.json(bake.stdout)["sources"] as? [String: Int])?["skipped"] == 3, "\(bake.stdout)")
        // A baked key whose file became a FIFO: its entry's source is gone, and its file skipped; one line.
        try FileManager.default.removeItem(atPath: project.sources + "/a.jpg")
        #expect(mkfifo(project.sources + "/a.jpg", 0o644) == 0)
        let again = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(again.stdout.split(separator: "\n").filter { $0.contains("a.jpg") }.map { $0.split(separator: " ").map(String.init) }
                == [["removed", "photos", "a.jpg", "(not-a-regular-file)"]], "\(again.stdout)")
    }

    /// `--list` tells the story the bake tells: a source `--min-age` defers is `deferred`, and
    /// one that no table gives a slot is `left-out` (it listed both as `new`, every time).
    @Test func listSaysDeferredAndLeftOut() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 2))
        for (i, name) in ["Landscape_1", "Landscape_2", "Landscape_3"].enumerated() {
            try project.add("p\(i).jpg", from: Corpus.photo(name))
            project.setModified("p\(i).jpg", secondsAgo: 3600 * (i + 1))  // p0 the newest
        }
        let first = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(first.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
                == [["new", "photos", "p0.jpg"], ["new", "photos", "p1.jpg"], ["left-out", "photos", "p2.jpg"]], "\(first.stdout)")
        // The totals go to standard error, so that standard output stays one line per source.
        #expect(first.stderr == "3 listed: 2 new, 1 left-out\n", "\(first.stderr)")
        let baked = try project.bake()
        #expect(baked.decoded == 2 && baked.leftOut == 1)
        project.setModified("p1.jpg", secondsAgo: 5)  // touched: too young for --min-age 60
        let young = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--min-age", "60", "--format", "json"])
        let sources = try #require(try Self.json(young.stdout)["sources"] as? [[String: String]])
        #expect(sources.map { $0["key"]! + " " + $0["status"]! } == ["p0.jpg unchanged", "p1.jpg deferred", "p2.jpg left-out"], "\(sources)")
        let dry = try run(Products.imagetable, ["bake", project.manifestPath, "--dry-run", "--min-age", "60", "--format", "json"])
        #expect((try Self.json(dry.stdout)["sources"] as? [String: Int]).map { [$0["deferred"], $0["leftOut"], $0["unchanged"]] }
                == [1, 1, 1], "the bake counts the same: \(dry.stdout)")
    }

    /// `--shard` values that name no shard are bad usage (64), with the reason.
    @Test func shardValuesThatNameNoShardAreBadUsage() throws {
        let project = try Self.project()
        // Run without the job engines' variables, whatever the test's own environment has.
        let unset = ["-u", "JOB_COMPLETION_INDEX", "-u", "SLURM_ARRAY_TASK_ID", "-u", "SLURM_ARRAY_TASK_COUNT"]
        for (value, reason) in [("auto", "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID"),
                                ("4/4", "4/4"), ("0/0", "0/0"), ("one/two", "one/two")] {
            let run = try run("/usr/bin/env", unset + [Products.imagetable, "bake", project.manifestPath, "--shard", value,
                                                       "--output", project.root + "/s"])
            #expect(run.status == 64 && run.stderr.contains(reason), "--shard \(value): \(run.status) \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: project.root + "/s"), "nothing was baked")
    }

    /// `--list` with `--dry-run` or `--format github` printed the listing and dropped the other
    /// option without a word: bad usage (64), which names both.
    @Test func listWithAnOptionItWouldIgnoreIsBadUsage() throws {
        let project = try Self.project()
        for (extra, reason) in [(["--dry-run"], "--list and --dry-run cannot be combined"),
                                (["--format", "github"], "--list prints text or json, not github annotations"),
                                (["--prune"], "--list touches nothing, so it prunes nothing")] {
            let run = try run(Products.imagetable, ["bake", project.manifestPath, "--list"] + extra)
            #expect(run.status == 64 && run.stderr.contains(reason) && run.stdout.isEmpty, "\(extra): \(run.status) \(run.stderr)")
        }
    }

    /// `validate` refuses a manifest whose `output` is a family's `sources`; `bake --output`
    /// naming that directory baked the tables, their locks and the state among the source images.
    @Test func outputIntoTheSourcesIsBadUsage() throws {
        let project = try Self.project()
        for output in ["src", "./src/../src/"] {
            let run = try run(Products.imagetable, ["bake", "manifest.yaml", "--output", output], in: project.root)
            #expect(run.status == 64 && run.stderr == "Error: --output \(output) is the sources directory of family 'photos': the tables "
                    + "and the bake state would lie among the source images; give the tables a directory of their own.\n"
                    + "Usage: imagetable bake [<options>] <manifest>\n  See 'imagetable bake --help' for more information.\n",
                    "the reason and the usage line, as every usage error: \(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: project.sources).allSatisfy { !$0.contains("imagetable") })
    }

    /// Arguments that were taken for something else: `help bak` printed the tool's help with
    /// exit 0; `bake -` looked for a file named `-`; `--max-source-size 0` was "not a size"; a
    /// path beginning with `-` and holding an `h` printed the help, exit 0.
    @Test func oddArgumentsSayWhatIsWrong() throws {
        let project = try Self.project()
        for (arguments, message) in [
            (["help", "bak"], "Error: unknown command 'bak'; did you mean 'bake'?"),
            (["bake", "-"], "Error: bake reads its manifest from a file, whose directory its sources and output are relative to; "
                + "only validate reads one from standard input ('-')."),
            (["export", "-", "--to", "dist"], "Error: export reads its manifest from a file"),
            (["export", "manifest.yaml", "--to", ""], "Error: --to must name the directory to replace with the export, not ''."),
            (["bake", "manifest.yaml", "--max-source-size", "0"], "Error: --max-source-size must be more than 0 bytes."),
            (["bake", "manifest.yaml", "--max-worker-memory", "200MiB"], "Error: --max-worker-memory must be 'none' or a size of at least 384.0 MiB "
                + "(--max-source-size plus 128 MiB, 256 MiB at least)"),
            (["bake", "manifest.yaml", "--max-worker-memory", "300MiB", "--max-source-size", "1GiB"],
             "Error: --max-worker-memory must be 'none' or a size of at least 1.1 GiB"),
            // Read as the flags -h -d -a …, it printed the help with exit 0 and checked nothing.
            (["verify", "-hdamaged.imagetable"], "Error: Unknown option '-hdamaged.imagetable'; a path or key that begins with '-' "
                + "goes after '--', the options before it (imagetable verify [options] -- -hdamaged.imagetable)\n"
                + "Usage: imagetable verify [<options>] <table> ...\n"),
            (["extract", "tables/t.imagetable", "-this.jpg", "-o", "x.png"], "Error: Unknown option '-this.jpg'"),
            // extract has no --format: its value was taken for a key, which the message now names.
            (["extract", "tables/t.imagetable", "--all", "out", "--format", "json"],
             "Error: --all extracts every entry; it takes neither a KEY nor -o (given: KEY 'json')."),
            // Split as `-o ld.imagetable` (verify has no -o), it was "Unknown option '-o'".
            (["verify", "-old.imagetable"], "Error: Unknown option '-old.imagetable'; a path or key that begins with '-' "
                + "goes after '--', the options before it (imagetable verify [options] -- -old.imagetable)"),
            (["extract", "tables/t.imagetable", "a.jpg", "--output", "-a.png"], "Error: Unknown option '-a.png'; a value that "
                + "begins with '-' is attached with '=' (--output=-a.png)\n"),
            // After a flag, the word is a path: `--repair=-old.imagetable` was the hint.
            (["verify", "--repair", "-old.imagetable"], "Error: Unknown option '-old.imagetable'; a path or key that begins with '-' "
                + "goes after '--', the options before it (imagetable verify [options] -- -old.imagetable)\n"),
            // A word that only begins with a digit is no number: it was read as flags (`-h`:
            // the help, exit 0).
            (["verify", "-2024-photos.imagetable"], "Error: Unknown option '-2024-photos.imagetable'"),
            (["validate", "-5h.yaml"], "Error: Unknown option '-5h.yaml'"),
            // The argument missing too: it was "Missing expected argument '<table> ...'".
            (["verify", "-x"], "Error: Unknown option '-x'\nUsage: imagetable verify [<options>] <table> ...\n"),
            (["inspect", "--bogus"], "Error: Unknown option '--bogus'"),
            // extract checks its arguments before parsing fails on the option.
            (["extract", "-q"], "Error: Unknown option '-q'\nUsage: imagetable extract [<options>] <table> <key> -o <file>\n"),
            (["extract", "-ocat.png"], "Error: Missing expected argument '<table>'"),
            (["verify"], "Error: Missing expected argument '<table> ...'"),
            (["extract", "tables/t.imagetable", "a.jpg", "-o", "-a.png"], "Error: Unknown option '-a.png'; a value that "
                + "begins with '-' is attached with '=' (-o=-a.png)"),
        ] {
            let run = try run(Products.imagetable, arguments, in: project.root)
            #expect(run.status == 64 && run.stderr.hasPrefix(message) && run.stdout.isEmpty, "\(arguments): \(run.status) \(run.stderr)")
        }
        #expect(try run(Products.imagetable, ["help", "bake"]).stdout.hasPrefix("OVERVIEW: Bake a manifest's sources into its tables."))
        for help in [["bake", "-h"], ["verify", "--help"], ["extract", "-vh"], ["extract", "-hv"]] {
            #expect(try run(Products.imagetable, help).status == 0, "\(help)")
        }
        // A value attached with '=' is a value: here a file that does not exist, not an option.
        let attached = try run(Products.imagetable, ["extract", "nowhere.imagetable", "a.jpg", "-o=-h.png"], in: project.root)
        #expect(attached.status == 1 && attached.stderr.hasPrefix("nowhere.imagetable: error: no such file"), "\(attached.stderr)")
        let after = try run(Products.imagetable, ["verify", "--", "-hdamaged.imagetable"], in: project.root)
        #expect(after.status == 1 && after.stderr.hasPrefix("-hdamaged.imagetable: error: no such file"), "\(after.stderr)")
        // Help and the version that do not reach standard output fail, as every report does.
        for words in [["--help"], ["bake", "--help"], ["--version"]] {
            let full = try run("/bin/sh", ["-c", "\"$0\" \"$@\" > /dev/full", Products.imagetable] + words)
            #expect(full.status == 1 && full.stderr.contains("[output-failed]"), "\(words): \(full.status) \(full.stderr)")
        }
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// What `imagetable bake` shows while and after it runs: GitHub annotations, progress on a
/// terminal of any width and in a log, failures as they happen, and a missing worker.
@Suite struct BakeOutputTests {
    /// Three good photos, one that ends early (fails: truncated) and one that is not an image
    /// (skipped with a warning).
    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        for i in 0..<3 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        let photo = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_1")))
        project.add("broken.jpg", bytes: Array(photo.prefix(4000)))
        project.add("notes.jpg", bytes: Array("not a picture".utf8))
        return project
    }

    static let truncated = "src/broken.jpg: error: the image data ends early"

    @Test func githubFormatAnnotatesFailedAndSkippedSources() throws {
        let project = try Self.project()
        let result = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(result.status == 3)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first { $0.hasPrefix("::error ") }?.hasPrefix("::error file=src/broken.jpg,title=truncated::'broken.jpg': the image data ends early") == true,
                "\(lines)")
        #expect(lines.contains { $0.hasPrefix("::warning file=src/notes.jpg,title=not-an-image::'notes.jpg': not an image") })
        #expect(lines.contains("manifest.yaml: baked 5 sources in " + (lines.first { $0.hasPrefix("manifest.yaml: baked") }?
            .dropFirst("manifest.yaml: baked 5 sources in ".count) ?? "")))
        #expect(lines.contains { $0.hasSuffix("3 decoded, 0 unchanged, 1 failed, 1 skipped") })
        // The manifest's own problems are annotated as validate annotates them.
        try project.editManifest { $0.replacingOccurrences(of: "32BitBGRA", with: "32BitRGBA") }
        let invalid = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(invalid.status == 1)
        #expect(invalid.stdout.hasPrefix("::error file=manifest.yaml,line=9,col=16,title=unknown-style::unknown style '32BitRGBA'"))
        // An error that stops the bake is annotated too: a missing sources directory on the
        // family's `sources` line (aMissingSourcesDirectoryIsAnnotatedOnTheManifest).
        try project.editManifest { $0.replacingOccurrences(of: "32BitRGBA", with: "32BitBGRA") }
        try FileManager.default.removeItem(atPath: project.sources)
        let stopped = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(stopped.status == 1 && stopped.stdout.contains("::error file=manifest.yaml,line=5,col=14,title=sources-unreadable::"),
                "\(stopped.stdout)")
    }

    /// A bake in which every source failed or was skipped said "baked 2 sources", which read as
    /// a success in a log: it says "baked none of 2 sources". One good source is enough for
    /// "baked".
    @Test func aBakeThatBakedNothingSaysSo() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        let photo = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_1")))
        project.add("broken.jpg", bytes: Array(photo.prefix(4000)))
        project.add("notes.jpg", bytes: Array("not a picture".utf8))
        let failed = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(failed.status == 3 && failed.stdout.hasPrefix("manifest.yaml: baked none of 2 sources in ")
                && failed.stdout.contains(": 0 decoded, 0 unchanged, 1 failed, 1 skipped\n"), "\(failed.stdout)")
        try project.add("good.jpg", from: Corpus.photo("Landscape_1"))
        let one = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(one.stdout.hasPrefix("manifest.yaml: baked 3 sources in "), "\(one.stdout)")
        let again = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(again.stdout.hasPrefix("manifest.yaml: baked 3 sources in ") && again.stdout.contains(": 0 decoded, 1 unchanged"),
                "\(again.stdout)")
    }

    /// A source that is a link leading outside the sources was annotated on the link's target
    /// (`file=outside/o.jpg`), a file that may not be in the repository: on the link itself.
    @Test func anOutsideLinkIsAnnotatedWhereItLies() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try FileManager.default.createDirectory(atPath: project.root + "/outside", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_2"), toPath: project.root + "/outside/o.jpg")
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/out.jpg", withDestinationPath: "../outside/o.jpg")
        let result = try run("/usr/bin/env", ["GITHUB_WORKSPACE=" + project.root, Products.imagetable, "bake", "--format", "github", "manifest.yaml"],
                             in: project.root)
        #expect(result.stdout.contains("::error file=src/out.jpg,title=outside-sources::'out.jpg': symbolic link leads outside the sources "
                                       + "directory ("), "\(result.stdout)")
        #expect(result.stdout.contains("/outside/o.jpg); not baked (--allow-outside-paths follows it)\n"), "\(result.stdout)")
    }

    /// `config/../site.yaml` with `config` a link into `deploy/` names `deploy/site.yaml`, as the
    /// kernel opens it: folding `..` by the text first annotated `site.yaml` (no such file) and
    /// read the manifest's paths from the wrong directory.
    @Test func aManifestReachedThroughALinkAndDotDotIsItsOwnFile() throws {
        let scratch = try TemporaryDirectory()
        let root = scratch.path
        try FileManager.default.createDirectory(atPath: root + "/deploy/config", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/deploy/photos", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/config", withDestinationPath: "deploy/config")
        try "version: 1\noutput: tables\nfamilies:\n  a:\n    sources: photos\n    formats:\n      t: {size: 8x8, style: 32BitBGRX, maximumCount: 4}\n"
            .write(toFile: root + "/deploy/site.yaml", atomically: true, encoding: .utf8)
        let result = try run("/usr/bin/env", ["GITHUB_WORKSPACE=" + root, Products.imagetable, "bake", "config/../site.yaml", "--format", "github"],
                             in: root)
        #expect(result.stdout.hasPrefix("::error file=deploy/site.yaml,line=7,col=29,title=unknown-style::") && !result.stdout.contains("missing-sources"),
                "\(result.stdout)")
    }

    /// A summary warning is annotated on its path and titled with its code, as every other
    /// annotation is (it was titled `warning`, with the whole line as its message).
    @Test func githubWarningsNameTheirFileAndCode() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        _ = try project.bake()
        try FileManager.default.copyItem(atPath: project.tables + "/grey.imagetable", toPath: project.tables + "/old.imagetable")
        let result = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(result.stdout.contains("::warning file=tables/old.imagetable,title=orphan-table::no format of the manifest names "
                                       + "this table; bake --prune deletes it\n"), "\(result.stdout)")
    }

    /// A family whose pattern selects nothing (`*.jpeg` over `.jpg` files) baked nothing and
    /// said nothing, so its empty tables shipped green: a `no-sources` warning on the manifest's
    /// `sources` line, in text and as an annotation GitHub can show (file, line, column). Not
    /// for a shard, which may hold none of a family.
    @Test func aFamilyWithNoSourcesIsAWarningAtItsSourcesLine() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4), include: "*.jpeg")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let text = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(text.status == 0)
        #expect(text.stderr.hasPrefix("manifest.yaml:5:14: warning: family 'photos' has no sources: no file in 'src' matches '*.jpeg'; "
                + "nothing is baked for it (check 'sources' and 'include'; a pattern matches letters in their case only) [no-sources]\n"), "\(text.stderr)")
        // And the file it missed, by the spelling of its extension.
        #expect(text.stderr.hasSuffix("/src/a.jpg: warning: the patterns take '*.jpeg' but not '*.jpg' (they match case and spelling "
                + "exactly); to take it, spell both in the include pattern, as in '*.{jpeg,jpg}' [extension-spelling]\n"), "\(text.stderr)")
        let github = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(github.stdout.hasPrefix("::warning file=manifest.yaml,line=5,col=14,title=no-sources::family 'photos' has no sources"),
                "\(github.stdout)")
        // In JSON an object, selected by its code as failures are.
        let json = try run(Products.imagetable, ["bake", "--format", "json", "manifest.yaml"], in: project.root)
        let document = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let warning = try #require((document["warnings"] as? [[String: Any]])?.first)
        #expect(warning["path"] as? String == "manifest.yaml" && warning["line"] as? Int == 5 && warning["column"] as? Int == 14
                && warning["code"] as? String == "no-sources" && (warning["message"] as? String)?.hasPrefix("family 'photos' has no sources") == true,
                "\(warning)")
        // A shard too, since no shard has a source there (it said nothing, and merge took it).
        let shard = try run(Products.imagetable, ["bake", "--shard", "0/2", "--output", "shard0", "manifest.yaml"], in: project.root)
        #expect(shard.status == 0 && shard.stderr.contains("[no-sources]"), "\(shard.stderr)")
    }

    /// A cap by design (`capped: true`, a table of the most recent photos of a collection) was
    /// warned of at every bake, and failed `--warnings-as-errors`: neither validate nor a bake
    /// warns, and the most recently modified source is still the one baked.
    @Test func aCappedFormatIsNotWarnedOf() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 1, capped: true}\n")
        try project.add("old.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("old.jpg", secondsAgo: 100)
        try project.add("new.jpg", from: Corpus.photo("Landscape_2"))
        let validate = try run(Products.imagetable, ["validate", "--warnings-as-errors", "manifest.yaml"], in: project.root)
        #expect(validate.status == 0 && validate.stdout.contains("valid (0 errors, 0 warnings)"), "\(validate.stdout)")
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(bake.status == 0 && bake.stderr.isEmpty && bake.stdout.contains("1 decoded, 0 unchanged, 0 failed, 1 left out"),
                "\(bake.stdout)\(bake.stderr)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key) == ["new.jpg"])
        // Without it, both warn.
        try project.editManifest { $0.replacingOccurrences(of: ", capped: true", with: "") }
        let warned = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(warned.stderr.contains("[more-sources-than-slots]") && !warned.stdout.contains("rebuilt"), "\(warned.stderr)")
    }

    /// The bake names the format with more sources than slots as `validate` does, by its name,
    /// once for all its scales' tables (it named each table, `thumb@2x`, a name the manifest
    /// never writes).
    @Test func moreSourcesThanSlotsNamesTheFormatOnce() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 1, scales: [1, 2]}\n")
        try project.add("old.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("old.jpg", secondsAgo: 100)
        try project.add("new.jpg", from: Corpus.photo("Landscape_2"))
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        let warnings = bake.stderr.split(separator: "\n").filter { $0.contains("[more-sources-than-slots]") }
        #expect(bake.status == 0 && warnings.count == 1, "\(bake.stderr)")
        #expect(warnings.first?.contains("family 'photos' has 2 sources but format 'thumb' holds 1 (maximumCount); "
                                         + "the 1 least recently modified is left out") == true, "\(bake.stderr)")
    }

    /// More sources than slots is annotated on the family's line of the manifest, where GitHub
    /// shows it (it was on the table, no file of the repository), and paths are from
    /// Sources named in other scripts than ASCII are annotated on their own paths: a name's
    /// bytes were counted off its path's Characters, so `src/été.jpg` was annotated as
    /// `sr/été.jpg`, and longer names lost the directory altogether or became absolute paths.
    @Test func githubAnnotationsNameNonASCIISourcesExactly() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 8))
        // NFC and NFD spellings, CJK, an emoji sequence, and a name beginning with a combining
        // mark (one Character with the slash before it), none of them an image.
        let names = ["\u{E9}t\u{E9}.jpg", "sub/cafe\u{301}.jpg", "\u{5199}\u{771F}.jpg", String(repeating: "\u{5199}", count: 50) + ".jpg",
                     "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}.jpg", "\u{301}x.jpg"]
        try FileManager.default.createDirectory(atPath: project.sources + "/sub", withIntermediateDirectories: true)
        for name in names { project.add(name, bytes: Array("not a picture".utf8)) }
        let result = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root,
                             environment: ["GITHUB_WORKSPACE": project.root])
        let files = result.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("::warning file="), line.contains("title=not-an-image") else { return nil }
            return String(line.dropFirst("::warning file=".count).prefix { $0 != "," })
        }
        #expect(files.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                == names.map { "src/" + $0 }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "\(result.stdout)")
    }

    /// `GITHUB_WORKSPACE`, the repository's root, when the bake runs in a subdirectory.
    @Test func githubAnnotationsArePlacedFromTheWorkspace() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 1))
        for i in 0..<2 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        project.add("notes.jpg", bytes: Array("not a picture".utf8))
        let parent = (project.root as NSString).deletingLastPathComponent, name = (project.root as NSString).lastPathComponent
        let result = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root,
                             environment: ["GITHUB_WORKSPACE": parent])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("::warning file=\(name)/manifest.yaml,line=4,col=3,title=more-sources-than-slots::family 'photos' has 2") },
                "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("::warning file=\(name)/src/notes.jpg,title=not-an-image::") }, "\(result.stdout)")
        // From a subdirectory, the manifest is `../manifest.yaml`: placed by its path from the
        // workspace, `..` folded, in its diagnostics and the bake's warnings alike.
        try project.add("p2.jpg", from: Corpus.photo("Landscape_2"))
        let below = try run(Products.imagetable, ["bake", "--format", "github", "../manifest.yaml"], in: project.sources,
                            environment: ["GITHUB_WORKSPACE": parent])
        #expect(below.stdout.contains("::warning file=\(name)/manifest.yaml,line=4,col=3,title=more-sources-than-slots::"), "\(below.stdout)")
        #expect(!below.stdout.contains("file=../") && !below.stdout.contains("/../"), "\(below.stdout)")
    }

    /// A sources directory that cannot be listed is annotated on the family's `sources` line of
    /// the manifest: it was annotated on the directory, where GitHub shows nothing.
    @Test func aMissingSourcesDirectoryIsAnnotatedOnTheManifest() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try FileManager.default.removeItem(atPath: project.sources)
        let result = try run(Products.imagetable, ["bake", "--format", "github", "manifest.yaml"], in: project.root)
        #expect(result.status == 1)
        #expect(result.stdout.contains("::error file=manifest.yaml,line=5,col=14,title=sources-unreadable::'src': "), "\(result.stdout)")
    }

    /// An output directory below a file says which part is in the way, where Foundation said
    /// "The operation could not be completed. (NSCocoaErrorDomain error 512.)".
    @Test func anOutputBelowAFileNamesTheFile() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let result = try run(Products.imagetable, ["bake", "--output", "manifest.yaml/tables", "manifest.yaml"], in: project.root)
        #expect(result.status == 1)
        #expect(result.stderr.hasSuffix("manifest.yaml/tables: error: cannot create the output directory: \(project.root)/manifest.yaml "
                                        + "exists and is not a directory [not-a-directory]\n"), "\(result.stderr)")
    }

    /// A path that begins an output line cannot forge a workflow command: GitHub Actions reads
    /// any line that starts, after blanks, with `::` as one, and a manifest's `output:` begins
    /// the rows of the bake's table (`::stop-commands::…` would have silenced every annotation
    /// after it). Such a line gets `./`, which names the same path. Control characters in an
    /// annotation are written out, as in text.
    @Test func noPathForgesAWorkflowCommand() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        project.add("e\u{1B}[31m.jpg", bytes: Array("not a picture".utf8))
        let directory = "::error file=README.md,line=1,title=Injected::forged"
        try project.editManifest { $0.replacingOccurrences(of: "output: tables", with: "output: \"\(directory)\"") }
        for format in ["github", "text"] {
            let result = try run(Products.imagetable, ["bake", "--format", format, "manifest.yaml"], in: project.root)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = (result.stdout + result.stderr).split(separator: "\n").map { $0.drop { $0 == " " } }
            let commands = lines.filter { $0.hasPrefix("::") }
            #expect(commands.map { $0.prefix(86) } == (format == "github" ? ["::warning file=src/e\\u{1B}[31m.jpg,title=not-an-image::'e\\u{1B}[31m.jpg': not an image"] : []),
                    "\(commands)")
            #expect(lines.contains { $0.hasPrefix("./\(directory)/bgra.imagetable ") }, "\(lines)")
            #expect(!result.stdout.contains("\u{1B}"))
        }
        let manifest = "::stop-commands::token.yaml"
        try FileManager.default.copyItem(atPath: project.manifestPath, toPath: project.root + "/" + manifest)
        let validate = try run(Products.imagetable, ["validate", "--format", "github", "--", manifest], in: project.root)
        #expect(validate.status == 0 && validate.stdout.hasPrefix("./\(manifest): valid (0 errors, 0 warnings)\n"), "\(validate.stdout)")
        // A runner trims Unicode spaces too before it looks: they are written out, as escapes.
        let spaced = "\u{3000}::error::m.yaml"
        try FileManager.default.copyItem(atPath: project.manifestPath, toPath: project.root + "/" + spaced)
        let wide = try run(Products.imagetable, ["validate", "--", spaced], in: project.root)
        #expect(wide.stdout.hasPrefix("\\u{3000}::error::m.yaml: valid"), "\(wide.stdout)")
        // `##[…]` and `##vso[…]` are commands anywhere in a line (GitHub's older form, Azure's).
        try project.add("##[stop-commands]x##vso[task.setvariable variable=A]B.jpg", from: Corpus.photo("Landscape_2"))
        let list = try run(Products.imagetable, ["bake", "--list", "manifest.yaml"], in: project.root)
        #expect(list.stdout.contains("#\\u{23}[stop-commands]x#\\u{23}vso[task.setvariable variable=A]B.jpg") && !list.stdout.contains("##"),
                "\(list.stdout)")
    }

    /// Standard output and standard error in one file (`> log 2>&1`) keep their order: a
    /// listing is flushed before its totals go to standard error, where its last 4 KiB block
    /// was flushed after them and the totals landed inside one of its lines.
    @Test func aListingAndItsTotalsKeepTheirOrderInOneFile() throws {
        let project = try BakeProject(formats: "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 200\n")
        let png = [UInt8](try #require(FileManager.default.contents(atPath: Corpus.png("basn2c08"))))
        let names = (0..<150).map { "a-source-with-a-name-long-enough-to-fill-blocks-\($0).png" }
        for name in names { project.add(name, bytes: png) }
        let both = try run("/bin/sh", ["-c", "\"$0\" bake --list manifest.yaml > both.txt 2>&1", Products.imagetable], in: project.root)
        #expect(both.status == 0, "\(both.stderr)")
        let lines = try String(contentsOfFile: project.root + "/both.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.last == "150 listed: 150 new", "\(lines.suffix(3))")
        #expect(Set(lines.dropLast()) == Set(names.map { "new       photos  \($0)" }), "\(lines.suffix(3))")
    }

    /// A reader that stops early (`| head -c 10`) ends a long listing as it ends `cat`: by
    /// SIGPIPE, silently. Past 64 KiB the C library writes straight to the pipe and loses the
    /// EPIPE, and the tool exited 1 with "cannot write to standard output: an earlier write
    /// failed".
    @Test func aLongListingEndsSilentlyWhenItsReaderStops() throws {
        let project = try BakeProject(formats: "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 2000\n")
        let png = [UInt8](try #require(FileManager.default.contents(atPath: Corpus.png("basn2c08"))))
        let stem = String(repeating: "a-source-with-a-long-name-", count: 3)
        for i in 0..<1_000 { project.add("\(stem)\(i).png", bytes: png) }
        let piped = try run("/bin/bash", ["-c", "\"$0\" bake --list manifest.yaml 2> err.txt | head -c 10 > /dev/null; echo ${PIPESTATUS[0]}",
                                          Products.imagetable], in: project.root)
        #expect(piped.stdout == "141\n", "\(piped.stdout)")
        #expect(FileManager.default.contents(atPath: project.root + "/err.txt")?.isEmpty == true,
                "\(String(decoding: FileManager.default.contents(atPath: project.root + "/err.txt") ?? Data(), as: UTF8.self))")
        // A full disk is named for what it is, where the reason was lost with the large write.
        let full = try run("/bin/sh", ["-c", "\"$0\" bake --list manifest.yaml > /dev/full", Products.imagetable], in: project.root)
        #expect(full.status == 1 && full.stderr.hasSuffix("<stdout>: error: cannot write to standard output: No space left on device; "
                                                          + "what it printed is incomplete [output-failed]\n"), "\(full.stderr)")
    }

    @Test func progressInALogIsPlainLinesWithEachFailureOnce() throws {
        let project = try Self.project()
        let result = try run(Products.imagetable, ["bake", "--progress", "manifest.yaml"], in: project.root)
        #expect(result.status == 3)
        #expect(!result.stderr.contains("\r") && !result.stderr.contains("\u{1B}"))
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let failure = try #require(lines.firstIndex { $0.contains(Self.truncated) })
        let last = try #require(lines.lastIndex { $0.hasPrefix("progress: ") })
        #expect(lines[last].hasPrefix("progress: 4/4 sources to decode, 1 failed, "))
        let progressLines = lines.filter { $0.hasPrefix("progress: ") }
        #expect(Set(progressLines).count == progressLines.count, "no progress line twice: \(progressLines)")
        #expect(failure < last, "the failure is shown as it happens, before the bake's last progress line")
        #expect(lines.filter { $0.contains(Self.truncated) }.count == 1)
        // Without --progress a log gets no progress, and the failure after the bake.
        let quiet = try run(Products.imagetable, ["bake", "--rehash", "manifest.yaml"], in: project.root)
        #expect(!quiet.stderr.contains("progress: ") && quiet.stderr.components(separatedBy: Self.truncated).count == 2)
    }

    /// On a terminal of 60 columns (a pseudo-terminal), the bar is redrawn on one line that never
    /// reaches the last column, the failure gets a line of its own, and the bar is erased at the
    /// end: the scrollback keeps the failure and nothing else.
    @Test func theBarFitsANarrowTerminalAndLeavesOnlyTheFailure() throws {
        let project = try Self.project()
        let script = """
            import fcntl, json, os, pty, struct, subprocess, sys, termios
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 60, 0, 0))
            p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
            os.close(slave)
            out = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            print(json.dumps({"status": p.wait(), "stderr": out.decode()}))
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script, Products.imagetable, "bake", "manifest.yaml"], in: project.root,
                             environment: ["COLUMNS": "200"])
        let document = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.stderr)")
        #expect(document["status"] as? Int == 3)
        // The terminal turns each "\n" into "\r\n".
        let stderr = try #require(document["stderr"] as? String).replacingOccurrences(of: "\r\n", with: "\n")
        #expect(stderr.contains("/4 sources"), "the bar was drawn")
        let segments = stderr.replacingOccurrences(of: "\u{1B}[K", with: "").split(whereSeparator: { $0 == "\r" || $0 == "\n" })
        let bars = segments.filter { $0.contains("/4 sources") }
        #expect(bars.last?.contains("4/4 sources") == true && bars.last?.contains("1 failed") == true)
        for bar in bars {
            #expect(bar.count <= 59, "\(bar.count) columns on a terminal of 60: \(bar)")
        }
        // The last bar is erased before anything else is written.
        #expect(stderr.contains("4/4 sources  ") && stderr.components(separatedBy: "1 failed\u{1B}[K\r\u{1B}[K").count == 2)
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        // What stays on the screen: each line up to its last erase, which the bar's redraws use.
        let kept = lines.map { line in String(line.split(separator: "\r", omittingEmptySubsequences: false).last ?? "") }
            .map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }.filter { !$0.isEmpty }
        #expect(kept.count == 2 && kept.filter { $0.contains(Self.truncated) }.count == 1, "\(kept)")
        #expect(kept.filter { $0.contains("notes.jpg: warning: not an image") }.count == 1, "\(kept)")
    }

    @Test func aMissingWorkerIsNamedWhereItWasExpected() throws {
        let project = try Self.project()
        let bin = project.root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.linkItem(atPath: Products.imagetable, toPath: bin + "/imagetable")
        let result = try run(bin + "/imagetable", ["bake", "manifest.yaml"], in: project.root)
        #expect(result.status == 1)
        // A bake that wrote nothing reports the error alone: no summary of nothing.
        #expect(result.stderr == "\(bin)/imagetable-worker: error: cannot run the worker \(bin)/imagetable-worker: No such file or "
                + "directory; imagetable-worker must be installed next to imagetable [worker-unavailable]\n", "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        // Said before anything is made: the output directory, empty tables and a state were left.
        #expect(!FileManager.default.fileExists(atPath: project.tables), "\((try? FileManager.default.contentsOfDirectory(atPath: project.tables)) ?? [])")
        // A bake with nothing to decode starts no worker, and needs none.
        let settled = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try settled.add("a.jpg", from: Corpus.photo("Landscape_1"))
        settled.setModified("a.jpg", secondsAgo: 3600)
        #expect(try run(Products.imagetable, ["bake", "manifest.yaml"], in: settled.root).status == 0)
        let unchanged = try run(bin + "/imagetable", ["bake", "manifest.yaml", "--prune"], in: settled.root)
        #expect(unchanged.status == 0 && unchanged.stdout.contains("0 decoded, 1 unchanged"), "\(unchanged.stderr)")
    }
}

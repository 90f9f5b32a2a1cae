import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a build pipeline reads of the commands: a report a full disk cut short fails the step,
/// a bake that cannot list its sources leaves nothing to export, a kill's hundreds of
/// interrupted writes are one note, and `merge ../OUT` stages beside OUT.
@Suite struct PipelineOutputTests {
    /// One photo baked into one small format.
    static func baked() throws -> BakeProject {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 12\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        _ = try project.bake()
        return project
    }

    /// Runs `imagetable ARGS > /dev/full` in the project's root.
    static func toFullDevice(_ arguments: [String], in root: String) throws -> ProcessResult {
        let quoted = ([Products.imagetable] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        return try run("/bin/sh", ["-c", "exec \(quoted) > /dev/full"], in: root)
    }

    /// `print` only sets the stream's error flag when a write fails: every command exited 0
    /// with its report lost (`bake --format json > /dev/full`, `inspect` into a full disk).
    @Test func aReportThatCannotBeWrittenFailsTheCommand() throws {
        let project = try Self.baked()
        let message = "<stdout>: error: cannot write to standard output: No space left on device; what it printed is incomplete [output-failed]"
        for arguments in [["bake", "manifest.yaml", "--format", "json"], ["bake", "manifest.yaml", "--dry-run"],
                          ["inspect", "tables/thumb.imagetable", "--format", "json"], ["verify", "tables/thumb.imagetable"],
                          ["validate", "manifest.yaml", "--format", "json"]] {
            let result = try Self.toFullDevice(arguments, in: project.root)
            #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
        }
        // A status that already says something is kept: a dry run that knows a source fails
        // (an empty file) exits 3.
        project.add("empty.jpg", bytes: [])
        let pending = try Self.toFullDevice(["bake", "manifest.yaml", "--dry-run"], in: project.root)
        #expect(pending.status == 3 && pending.stderr.contains(message), "\(pending.status) \(pending.stderr)")
        // The lines the worker prints for `extract` are its own: they fail it too.
        let extract = try Self.toFullDevice(["extract", "tables/thumb.imagetable", "--all", "out"], in: project.root)
        #expect(extract.status == 1 && extract.stderr.contains(message), "\(extract.status) \(extract.stderr)")
        // Where everything fits, nothing changes.
        let fine = try run(Products.imagetable, ["verify", "tables/thumb.imagetable"], in: project.root)
        #expect(fine.status == 0 && fine.stderr.isEmpty)
    }

    /// Foundation's `FileHandle.write` ends the process (`SIGILL`, status 132) when a write
    /// fails: every command that had a warning or an error to print crashed with standard error
    /// on a full device, a bake just after committing its tables, and `2>&1 | head` crashed the
    /// bake 6 runs in 8. A diagnostic that cannot be written is dropped; the status stands.
    @Test func aDiagnosticThatCannotBeWrittenCrashesNothing() throws {
        let project = try Self.baked()
        project.add("notes.jpg", bytes: Array("not a picture".utf8))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        func toFullStandardError(_ arguments: [String]) throws -> ProcessResult {
            let quoted = ([Products.imagetable] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
            return try run("/bin/sh", ["-c", "exec \(quoted) 2> /dev/full"], in: project.root)
        }
        let bake = try toFullStandardError(["bake", "manifest.yaml"])
        #expect(bake.exited && bake.status == 0 && bake.stdout.contains("1 decoded, 1 unchanged, 0 failed, 1 skipped"),
                "\(bake.exited) \(bake.status) \(bake.stdout)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().count == 2)
        for (arguments, status) in [(["inspect", "none.imagetable"], 1), (["validate", "none.yaml"], 1),
                                    (["extract", "tables/thumb.imagetable", "nope", "-o", "x.png"], 1),
                                    (["extract", "tables/thumb.imagetable", "--all", "tables/thumb.imagetable"], 1)] {
            let result = try toFullStandardError(arguments)
            #expect(result.exited && result.status == Int32(status), "\(arguments): \(result.exited) \(result.status)")
        }
        // Standard error alone into a pipe whose reader is gone: the status stands (the commands
        // that start no worker died by SIGPIPE).
        let script = "import os, subprocess, sys\nr, w = os.pipe()\nos.close(r)\n"
            + "print(subprocess.run(sys.argv[1:], stderr=w, stdout=subprocess.DEVNULL).returncode)"
        for (arguments, status) in [(["inspect", "none.imagetable"], "1"), (["bak"], "64"), (["bake", "manifest.yaml"], "0")] {
            let closed = try run("/usr/bin/env", ["python3", "-c", script, Products.imagetable] + arguments, in: project.root)
            #expect(closed.stdout == status + "\n", "\(arguments): \(closed.stdout)\(closed.stderr)")
        }
        // Both streams into a pipe whose reader is gone: the closed pipe's end, not a crash.
        project.add("c.jpg", bytes: Array("not a picture either".utf8))
        let piped = try run("/bin/bash", ["-c", "'\(Products.imagetable)' bake manifest.yaml --rehash 2>&1 | true; echo \"status ${PIPESTATUS[0]}\""],
                            in: project.root)
        #expect(["status 0\n", "status 141\n"].contains(piped.stdout), "\(piped.stdout)\(piped.stderr)")
    }

    /// A table or a bake state that is a directory said `io` ("open failed: Is a directory", and
    /// SQLite's "disk I/O error"), where `inspect` and `verify` say `is-a-directory`.
    @Test func aDirectoryInATablesOrTheStatesPlaceIsSaidToBeOne() throws {
        let project = try Self.baked()
        try FileManager.default.removeItem(atPath: project.tables + "/thumb.imagetable")
        try FileManager.default.createDirectory(atPath: project.tables + "/thumb.imagetable", withIntermediateDirectories: false)
        let table = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(table.status == 1 && table.stderr.hasSuffix("[is-a-directory]\n"), "\(table.stderr)")
        try FileManager.default.removeItem(atPath: project.tables + "/thumb.imagetable")
        let state = project.tables + "/.imagetable-state.sqlite"
        try FileManager.default.removeItem(atPath: state)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(bake.status == 1 && bake.stderr.hasSuffix(": error: is a directory where the bake state belongs; remove it (the bake "
                                                          + "makes the file) [is-a-directory]\n"), "\(bake.stderr)")
    }

    /// A bake that stopped at its scan (a sources directory that is missing) had already made
    /// the output directory, an empty table, its lock and a state, which `export` then shipped
    /// with exit 0.
    @Test func aBakeThatCannotListItsSourcesMakesNothing() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 12\n")
        try FileManager.default.removeItem(atPath: project.sources)
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        // On the family's `sources` line, as the manifest's own diagnostics are.
        #expect(bake.status == 1 && bake.stderr.contains("\nmanifest.yaml:5:14: error: sources directory 'src' (\(project.sources)) of family "
                                                         + "'photos' does not exist or is not a directory [sources-unreadable]\n"),
                "\(bake.stderr)")
        #expect(!FileManager.default.fileExists(atPath: project.tables))
        let export = try run(Products.imagetable, ["export", "manifest.yaml", "--to", "dist"], in: project.root)
        #expect(export.status == 1 && !FileManager.default.fileExists(atPath: project.root + "/dist"), "\(export.stdout)\(export.stderr)")
    }

    /// After a `kill -9`, the next bake finds an interrupted write in every slot that was being
    /// written, hundreds in a large table: it printed one note each on standard output, after
    /// the summary. One line per table and kind now, on standard error with the warnings.
    @Test func interruptedWritesAreOneNote() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 12\n")
        for i in 0..<7 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i % 4)")) }
        _ = try project.bake()
        let table = project.tables + "/thumb.imagetable"
        let reader = try ImageTableReader(path: table)
        let slots = reader.entries().map(\.slot).sorted()
        #expect(slots.count == 7)
        // An odd generation: what a writer killed between its two stores leaves.
        for slot in slots { try MergeTests.setLowBit(in: table, at: reader.layout.recordOffset(slot)) }
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root)
        #expect(bake.status == 0)
        let shown = slots.prefix(5).map(String.init).joined(separator: ", ")
        #expect(bake.stderr.contains("tables/thumb.imagetable: note: 7 slots: interrupted write; dropped them (slots \(shown), …) [discarded-interrupted-write]\n"),
                "\(bake.stderr)")
        #expect(!bake.stdout.contains("note:") && bake.stdout.contains("7 decoded"), "\(bake.stdout)")
    }

    /// `merge ../OUT`: Foundation's standardized URL dropped the leading `..`, so the staging
    /// directory was made in the working directory and renamed across to OUT (on another file
    /// system, `rename failed: Invalid cross-device link`).
    @Test func mergeStagesBesideAnOutputAboveTheWorkingDirectory() throws {
        let project = try Self.baked()
        let work = project.root + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let merged = try run(Products.imagetable, ["merge", "../out/merged", "../tables"], in: work)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try ImageTableReader(path: project.root + "/out/merged/thumb.imagetable").entries().count == 1)
        // Nothing made where the path was read from the working directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    /// `bake --output DIR` and `merge DIR …` write tables the manifest's `output` does not name,
    /// so a sharded bake's merged set could not be exported: `export --output DIR` reads them.
    @Test func exportReadsTheTablesOfAnotherDirectory() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 8x8\n        style: 32BitBGRA\n        maximumCount: 12\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml", "--output", "alt"], in: project.root)
        #expect(bake.status == 0, "\(bake.stderr)")
        let missing = try run(Products.imagetable, ["export", "manifest.yaml", "--to", "dist"], in: project.root)
        #expect(missing.status == 1 && missing.stderr.contains("no such table; bake the manifest before exporting it"), "\(missing.stderr)")
        let export = try run(Products.imagetable, ["export", "manifest.yaml", "--output", "alt", "--to", "dist"], in: project.root)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try ImageTableReader(path: project.root + "/dist/thumb.imagetable").entries().map(\.key) == ["a.jpg"])
        // One shard is part of the sources: exporting it shipped it as if it were all of them.
        _ = try run(Products.imagetable, ["bake", "manifest.yaml", "--shard", "0/2", "--output", "shard0"], in: project.root)
        let shard = try run(Products.imagetable, ["export", "manifest.yaml", "--output", "shard0", "--to", "dist"], in: project.root)
        #expect(shard.status == 1 && shard.stderr == "shard0: error: the directory holds shard 0/2 of a sharded bake, not every source; "
                + "merge the shards (imagetable merge OUT DIR...) and export OUT [shard-mismatch]\n", "\(shard.stderr)")
    }

    #if os(Linux)
    /// A CI system cancels a job with SIGINT (then SIGTERM, then SIGKILL): the bake was killed at
    /// once, with no report (`--format json` printed nothing) and interrupted writes for the next
    /// bake. It now finishes the sources it sent, publishes and commits them, reports them with
    /// the `interrupted` error and ends by the signal; the table is sound and the next bake goes on.
    @Test func anInterruptedBakeKeepsWhatItBakedAndSaysSo() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 40\n")
        for i in 0..<20 { try project.add(String(format: "a%02d.jpg", i), from: Corpus.photo("Landscape_\(i % 4)")) }
        // At the first source a worker has read, its bake (the worker's parent) is sent SIGINT.
        // The bake reads sources too (the same hook point): those calls are not the worker's.
        let hook = project.root + "/hook.sh", mark = project.root + "/signalled"
        try """
            #!/bin/sh
            [ "$1" = source-read ] || exit 0
            case "$(cat /proc/$2/comm)" in imagetable-w*) ;; *) exit 0 ;; esac
            [ -e \(mark) ] && exit 0
            touch \(mark)
            kill -INT $(awk '{print $4}' /proc/$2/stat)
            """.write(toFile: hook, atomically: true, encoding: .utf8)
        #expect(chmod(hook, 0o755) == 0)
        let bake = try run(Products.imagetable, ["bake", "manifest.yaml", "-j", "1", "--format", "json"], in: project.root,
                           environment: ["IMAGETABLE_TEST_HOOK": hook])
        // Ended by the signal, its report written, so that a shell stops the script that ran it
        // (an exit status of 130 let `for m in *.yaml; do imagetable bake "$m"; done` go on).
        #expect(!bake.exited && bake.status == SIGINT, "\(bake.status) \(bake.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: bake.output) as? [String: Any], "\(bake.stdout)")
        let fatal = try #require(document["fatal"] as? [String: Any])
        #expect(fatal["code"] as? String == "interrupted" && document["ok"] as? Bool == false)
        #expect((fatal["message"] as? String)?.hasPrefix("interrupted by SIGINT: the sources already sent to workers were finished") == true)
        let decoded = try #require((document["sources"] as? [String: Any])?["decoded"] as? Int)
        #expect(decoded >= 1 && decoded < 20, "\(decoded)")
        let verify = try run(Products.imagetable, ["verify", "tables/thumb.imagetable"], in: project.root)
        #expect(verify.status == 0 && verify.stdout.contains("ok, \(decoded) entries verified"), "\(verify.stdout)")
        let again = try run(Products.imagetable, ["bake", "manifest.yaml", "--format", "json"], in: project.root)
        let rest = try #require(try JSONSerialization.jsonObject(with: again.output) as? [String: Any])
        #expect(again.status == 0 && (rest["sources"] as? [String: Any])?["decoded"] as? Int == 20 - decoded)
    }
    #endif
}

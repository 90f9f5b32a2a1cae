import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `imagetable bake` as a user runs it: exit codes, summaries and JSON.
struct BakeCLITests {
    @Test func exitCodesZeroThreeAndOne() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("good.jpg", from: Corpus.photo("Portrait_1"))
        let ok = try run(Products.imagetable, ["bake", project.manifestPath, "--jobs", "1"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("1 decoded, 0 unchanged, 0 failed"))

        project.add("bad.png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0])
        project.setModified("bad.png", secondsAgo: 7200)  // old enough for the state to remember its failure
        let partial = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(partial.status == 3)
        #expect(partial.stderr.contains("\(project.sources)/bad.png: error:"))
        #expect(partial.stdout.contains("0 decoded, 1 unchanged, 1 failed"))

        let strict = try run(Products.imagetable, ["bake", project.manifestPath, "--strict"])
        // The failure once, with its own code: the stop repeated it with a second one.
        #expect(strict.status == 1 && strict.stderr.components(separatedBy: "bad.png: error:").count == 2
                && !strict.stderr.contains("[source-failed]"), "\(strict.stderr)")
        #expect(strict.stdout.contains("0 decoded, 1 unchanged, 1 failed") && strict.stdout.contains("stopped at the first failure (--strict)"),
                "what it did before it stopped: \(strict.stdout)")
        // A dry run meets the failure the state remembers, and says why it exits 1 (it said
        // nothing once the stop no longer repeated the failure).
        let dry = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "--dry-run"])
        #expect(dry.status == 1 && dry.stdout.contains("stopped at the first failure (--strict)"), "\(dry.stdout)")
        // In JSON, the counts of what it did and the failure that stopped it.
        let strictJSON = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(strictJSON.stdout.utf8)) as? [String: Any])
        #expect(strictJSON.status == 1 && document["ok"] as? Bool == false)
        #expect((document["fatal"] as? [String: Any])?["code"] as? String == "source-failed", "\(document)")
        // The decoder's own words, as the failure has them (the fatal error had none).
        let cause = (document["failures"] as? [[String: Any]])?.first?["cause"] as? String
        #expect(cause != nil && (document["fatal"] as? [String: Any])?["cause"] as? String == cause, "\(document)")
        #expect((document["sources"] as? [String: Int]).map { $0["unchanged"] == 1 && $0["failed"] == 1 } == true, "\(document)")

        // Several failures known before decoding are all said, and the stop says so: it said
        // "stopped at the first failure" after listing every one.
        project.add("worse.png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 1, 1])
        project.setModified("worse.png", secondsAgo: 7200)
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 3)
        let known = try run(Products.imagetable, ["bake", project.manifestPath, "--strict"])
        #expect(known.status == 1 && known.stderr.contains("bad.png: error:") && known.stderr.contains("worse.png: error:"), "\(known.stderr)")
        #expect(known.stdout.contains("stopped before decoding: 2 sources are known to fail (--strict)")
                && !known.stdout.contains("stopped at the first failure"), "\(known.stdout)")
        // A dry run says what the bake would do: it said "1 decoded", "stopped at the first
        // failure", and that it would write the new source.
        try project.add("new.jpg", from: Corpus.photo("Landscape_2"))
        let knownDry = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "--dry-run"])
        #expect(knownDry.status == 1 && knownDry.stdout.contains("stopped before decoding: 2 sources are known to fail (--strict)")
                && knownDry.stdout.contains("0 decoded") && knownDry.stdout.contains("1 not attempted"), "\(knownDry.stdout)")
        let rows = knownDry.stdout.split(separator: "\n").filter { $0.contains(".imagetable") }
        #expect(rows.count == 4 && rows.allSatisfy { $0.split(separator: " ").dropFirst().joined(separator: " ") == "0 0 0 1/10" },
                "written, evicted, pruned, entries: \(knownDry.stdout)")
        let strictBake = try run(Products.imagetable, ["bake", project.manifestPath, "--strict"])
        #expect(strictBake.status == 1 && strictBake.stdout.split(separator: "\n").filter { $0.contains(".imagetable") }
                    .allSatisfy { $0.split(separator: " ").dropFirst().joined(separator: " ") == "0 0 0 1/10" }, "\(strictBake.stdout)")
        try FileManager.default.removeItem(atPath: project.sources + "/new.jpg")
        let knownJSON = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "--format", "json"])
        let knownDocument = try #require(try JSONSerialization.jsonObject(with: Data(knownJSON.stdout.utf8)) as? [String: Any])
        #expect(((knownDocument["fatal"] as? [String: Any])?["message"] as? String)?.hasPrefix("2 sources are known to fail, the first bad.png: ") == true,
                "\(knownDocument)")

        try "version: 1\noutput: t\nfamilies: {}\nbogus: 1\n".write(toFile: project.manifestPath, atomically: true, encoding: .utf8)
        let invalid = try run(Products.imagetable, ["bake", project.manifestPath])
        // On standard error, as every error of a bake (they were on standard output).
        #expect(invalid.status == 1 && invalid.stderr.contains("manifest.yaml:4:1: error:") && invalid.stdout.isEmpty, "\(invalid.stdout)")

        #expect(try run(Products.imagetable, ["bake"]).status == 64)
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--jobs", "0"]).status == 64)
    }

    /// `--strict` said "baked 5 sources: 0 decoded, 1 unchanged, 1 failed" with three sources
    /// never tried, which no count said: `notAttempted`, and "3 not attempted" in text. A stop
    /// during the run leaves decoded, failed and not attempted summing to what it planned.
    @Test func aStrictStopCountsTheSourcesItNeverTried() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try project.add("good.jpg", from: Corpus.photo("Portrait_1"))
        project.add("bad.png", bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0])
        project.setModified("bad.png", secondsAgo: 7200)  // remembered: known to fail before the run
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 3)
        for i in 0..<3 { try project.add("new\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        let known = try run(Products.imagetable, ["bake", project.manifestPath, "--strict"])
        #expect(known.status == 1 && known.stdout.contains(": baked part of 5 sources in ")
                && known.stdout.contains(": 0 decoded, 1 unchanged, 1 failed, 3 not attempted\n"), "\(known.stdout)")
        let json = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "--format", "json"])
        let counts = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["sources"] as? [String: Int])
        #expect(counts["notAttempted"] == 3 && counts["decoded"] == 0, "\(counts)")
        // A failure met during the run: nothing planned is lost from the counts.
        project.add("bad.png", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_2"))).prefix(3000)))
        let during = try run(Products.imagetable, ["bake", project.manifestPath, "--strict", "-j", "1", "--format", "json"])
        let after = try #require((try JSONSerialization.jsonObject(with: Data(during.stdout.utf8)) as? [String: Any])?["sources"] as? [String: Int])
        #expect(during.status == 1 && after["failed"] == 1 && after["decoded"]! + after["failed"]! + after["notAttempted"]! == 4, "\(after)")
    }

    /// A negative number is a value out of range, said as such: ArgumentParser took `-3` for an
    /// option and said "Missing value for '--limit <n>'".
    @Test func negativeNumbersAreOutOfRangeNotMissing() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        let cases: [([String], String)] = [
            (["bake", project.manifestPath, "-j", "-2"], "Error: --jobs must be at least 1."),
            (["bake", project.manifestPath, "--lock-timeout", "-1"], "Error: --lock-timeout must be a number of seconds, 0 or more."),
            (["bake", project.manifestPath, "--timeout", "nan"], "Error: --timeout must be a positive number of seconds."),
            (["bake", project.manifestPath, "--shard", "-1/3", "--output", project.root + "/s"], "Error: --shard -1/3: the shard '-1' is not a whole number."),
            (["merge", project.root + "/m", project.root + "/a", "--lock-timeout", "nan"], "Error: --lock-timeout must be a number of seconds, 0 or more."),
            (["inspect", "t.imagetable", "--limit", "-3"], "Error: --limit must be 0 or more."),
            // A missing value takes the next option, which is said, not that option being missing.
            (["bake", project.manifestPath, "--shard", "--output", project.root + "/s"],
             "Error: --shard needs a value, K/N (such as 0/4) or auto; '--output' is an option."),
        ]
        for (arguments, message) in cases {
            let result = try run(Products.imagetable, arguments)
            #expect(result.status == 64 && result.stderr.hasPrefix(message + "\n"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func jsonSummaryParses() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("good.jpg", from: Corpus.photo("Portrait_1"))
        project.add("empty.jpg", bytes: [])
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect(run.status == 3)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources == ["found": 2, "decoded": 1, "unchanged": 0, "failed": 1, "leftOut": 0, "removed": 0, "keptPrevious": 0,
                            "skipped": 0, "deferred": 0, "notAttempted": 0])
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.first?["key"] as? String == "empty.jpg" && failures.first?["code"] as? String == "empty")
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.count == 4 && tables.allSatisfy { $0["written"] as? Int == 1 })
        // Where the time went: every phase, none negative, together within the bake's own time,
        // and the one that decoded a source took some.
        let phases = try #require(json["phases"] as? [String: Double])
        #expect(Set(phases.keys) == ["open", "scan", "diff", "plan", "render", "commit"])
        let seconds = try #require(json["seconds"] as? Double)
        #expect(phases.values.allSatisfy { $0 >= 0 } && phases.values.reduce(0, +) <= seconds + 0.001)
        #expect(try #require(phases["render"]) > 0)
        // CPU of the bake's process and of the worker that decoded (reaped, so counted).
        let cpu = try #require(json["cpu"] as? [String: Double])
        #expect(Set(cpu.keys) == ["bake", "workers"])
        #expect(try #require(cpu["bake"]) > 0 && (try #require(cpu["workers"])) > 0)
    }

    /// A dry run's plan names each job's family and tables: two families over one directory,
    /// each source a job of each, with its own family's tables.
    @Test func aDryRunsPlanNamesEachJobsFamily() throws {
        let project = try BakeProject()
        let yaml = "version: 1\noutput: tables\nfamilies:\n"
            + "  photos:\n    sources: src\n    formats:\n      big:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 5\n"
            + "  thumbs:\n    sources: src\n    formats:\n      small:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 5\n"
        try yaml.write(toFile: project.manifestPath, atomically: true, encoding: .utf8)
        for key in ["a.jpg", "b.jpg"] { try project.add(key, from: Corpus.photo("Portrait_1")) }
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--dry-run", "--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
        let jobs = try #require((json["plan"] as? [String: Any])?["jobs"] as? [[String: Any]], "\(run.stdout)")
        let named = jobs.map { "\($0["family"] as? String ?? "?") \($0["key"] as? String ?? "?") \(($0["tables"] as? [String] ?? []).map { ($0 as NSString).lastPathComponent })" }
        #expect(named == ["photos a.jpg [\"big.imagetable\"]", "photos b.jpg [\"big.imagetable\"]",
                          "thumbs a.jpg [\"small.imagetable\"]", "thumbs b.jpg [\"small.imagetable\"]"], "\(jobs)")
    }

    /// `--no-sync` changes when pixels reach the disk, not what the tables hold: the same entries
    /// (source fingerprints and pixel checksums) as a flushed bake of the same sources, and tables
    /// that verify.
    @Test func noSyncBakesTheSameEntries() throws {
        let flushed = try BakeProject(formats: BakeProject.fourStyles(size: 24, maximumCount: 4))
        let unsynced = try BakeProject(formats: BakeProject.fourStyles(size: 24, maximumCount: 4))
        for project in [flushed, unsynced] {
            try project.add("a.jpg", from: Corpus.photo("Portrait_1"))
            try project.add("b.jpg", from: Corpus.photo("Landscape_3"))
        }
        #expect(try run(Products.imagetable, ["bake", flushed.manifestPath, "--no-progress"]).status == 0)
        #expect(try run(Products.imagetable, ["bake", unsynced.manifestPath, "--no-progress", "--no-sync"]).status == 0)
        let entries = try unsynced.entries()
        #expect(entries.count == 4 && entries.values.allSatisfy { $0.count == 2 })
        #expect(entries == (try flushed.entries()))
        let tables = try FileManager.default.contentsOfDirectory(atPath: unsynced.tables).filter { $0.hasSuffix(".imagetable") }
        #expect(try run(Products.imagetable, ["verify"] + tables.map { unsynced.tables + "/" + $0 }).status == 0)
    }

    /// The disk fills up (here: a file size limit) in the middle of a bake: a clean fatal error,
    /// and every entry that was committed still verifies.
    @Test func aFullDiskStopsTheBakeCleanly() throws {
        let project = try BakeProject(formats: "      big:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 50\n")
        for i in 0..<4 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        // Room for the header, the index and one slot and a half.
        let limit = 16384 + 98304 * 3 / 2
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--fsize=\(limit)", Products.imagetable, "bake", project.manifestPath, "--jobs", "1"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 1, "\(message)")
        #expect(message.contains("ulimit -f"), "a size limit is not a full disk: \(message)")
        let report = TableVerifier.verify(path: project.tables + "/big.imagetable")
        #expect(report.isValid && report.validEntries == 1, "\(report.problems)")
    }

    /// Under a file size limit `export` and `merge` died of SIGXFSZ (status 153) with no word,
    /// leaving their staging directories: they report the file they were writing, where it
    /// was going, and say it is the size limit, not free space.
    @Test func exportAndMergeReportAFileSizeLimit() throws {
        let project = try BakeProject(formats: "      big:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 50\n")
        for i in 0..<4 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        _ = try project.bake(jobs: 1)
        let out = project.root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let limit = "--fsize=\(16384 + 98304 * 3 / 2)"
        for (arguments, target) in [(["export", project.manifestPath, "--to", out + "/exported"], out + "/exported/big.imagetable"),
                                    (["merge", out + "/merged", project.tables], out + "/merged/big.imagetable")] {
            let result = try run("/usr/bin/prlimit", [limit, Products.imagetable] + arguments)
            #expect(result.exited && result.status == 1, "\(arguments[0]): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix(target + ": error: ") && result.stderr.contains("ulimit -f")
                    && result.stderr.contains("[no-space]"), "\(arguments[0]): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty, "nothing is left behind")
    }

    /// kill -9 of a bake: its workers die with it, every table verifies, and the next bake
    /// finishes the job.
    @Test func aKilledBakeLeavesValidTablesAndNoOrphans() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 32, maximumCount: 100))
        let photos = (0...8).flatMap { ["Landscape_\($0)", "Portrait_\($0)"] }
        for i in 0..<60 { try project.add("s\(i).jpg", from: Corpus.photo(photos[i % photos.count])) }
        let bake = Process()
        bake.executableURL = URL(fileURLWithPath: Products.imagetable)
        bake.arguments = ["bake", project.manifestPath, "--jobs", "2"]
        bake.standardOutput = FileHandle.nullDevice
        bake.standardError = FileHandle.nullDevice
        try bake.run()
        // Let it get going: workers started and a first batch published (the table's header
        // counts it), but not all 60, which a quiet machine bakes in a third of a second.
        var workers: [Int32] = []
        let deadline = Date().addingTimeInterval(10)
        while workers.count < 2 && Date() < deadline {
            usleep(1_000)
            workers = Self.children(of: bake.processIdentifier)
        }
        while (try? ImageTableReader(path: project.tables + "/bgra.imagetable"))?.count ?? 0 == 0 && Date() < deadline { usleep(500) }
        kill(bake.processIdentifier, SIGKILL)
        bake.waitUntilExit()
        #expect(!workers.isEmpty, "the bake must have started workers")
        let gone = Date().addingTimeInterval(2)
        while workers.contains(where: { kill($0, 0) == 0 }) && Date() < gone { usleep(10_000) }
        #expect(workers.allSatisfy { kill($0, 0) != 0 }, "workers outlived their bake")
        for name in ["bgra", "bgr", "rgb555", "grey"] {
            let report = TableVerifier.verify(path: project.tables + "/\(name).imagetable")
            // Interrupted writes, and a count the kill left stale: what the next bake mends.
            #expect(report.verdict != .damaged, "\(report.problems)")
        }
        let again = try project.bake()
        #expect(again.failed.isEmpty && again.decoded + again.unchanged == 60 && again.decoded > 0)
        #expect(again.tables.allSatisfy { $0.entries == 60 })
        for name in ["bgra", "bgr", "rgb555", "grey"] {
            #expect(TableVerifier.verify(path: project.tables + "/\(name).imagetable").isValid)
        }
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { child in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid
        }
    }

    @Test func aMissingSourcesDirectoryIsFatal() throws {
        let project = try BakeProject()
        try FileManager.default.removeItem(atPath: project.sources)
        let run = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(run.status == 1 && run.stderr.contains("sources-unreadable"))
    }
}

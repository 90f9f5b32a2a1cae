import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sources that change while a bake reads them, with the races forced by the test hook
/// (`IMAGETABLE_TEST_HOOK`) at the instant they matter, not timed.
@Suite struct SourceChangeTests {
    static let a = Corpus.photo("Landscape_1"), b = Corpus.photo("Portrait_2")

    /// A hook that runs `action` (shell, with `$3` the file) once, the first time any process of
    /// the bake reaches `point` for `file` (or for any file, when `file` is empty).
    static func hook(in project: BakeProject, at point: String, file: String = "", _ action: String) throws -> String {
        let path = project.root + "/hook-\(point)"
        let marker = project.root + "/hook-\(point).done"
        let script = """
            #!/bin/sh
            [ "$1" = "\(point)" ] || exit 0
            [ -z "\(file)" ] || [ "$3" = "\(file)" ] || exit 0
            mkdir "\(marker)" 2>/dev/null || exit 0
            \(action)

            """
        try writeExecutable(script, to: path)
        return path
    }

    /// Runs `imagetable bake` with the hook; returns its status, standard output and error.
    static func bake(_ project: BakeProject, hook: String? = nil, _ extra: [String] = []) throws -> ProcessResult {
        try run(Products.imagetable, ["bake", project.manifestPath] + extra, environment: hook.map { ["IMAGETABLE_TEST_HOOK": $0] } ?? [:])
    }

    /// The key's entry in the BGRA table: source UUID and pixel checksum.
    static func entry(_ project: BakeProject, _ key: String) throws -> (source: UUID, checksum: UInt32)? {
        let info = try ImageTableReader(path: project.tables + "/bgra.imagetable").entry(forKey: key)
        return info.map { ($0.sourceUUID, $0.pixelChecksum) }
    }

    /// The entry a clean bake of `photo` alone makes.
    static func clean(_ photo: String) throws -> (source: UUID, checksum: UInt32) {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 4))
        try project.add("x.jpg", from: photo)
        _ = try project.bake()
        return try #require(try entry(project, "x.jpg"))
    }

    static func project() throws -> BakeProject {
        try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 4))
    }

    /// The file is replaced between the planner's read (which fingerprints B) and the worker's
    /// (which decodes A); then rolled back to B. The entry must always carry the fingerprint of
    /// the bytes its pixels were decoded from, so the rollback is seen and B's pixels come back.
    @Test func aReplacementBetweenTwoReadsNeverPairsOneFingerprintWithOtherPixels() throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        _ = try project.bake()
        try project.add("x.jpg", from: Self.b)
        let swap = try Self.hook(in: project, at: "source-read", file: project.sources + "/x.jpg", "cp '\(Self.a)' \"$3\"")
        #expect(try Self.bake(project, hook: swap).status == 0)
        let a = try Self.clean(Self.a), b = try Self.clean(Self.b)
        let after = try #require(try Self.entry(project, "x.jpg"))
        #expect(after.source == a.source && after.checksum == a.checksum, "the worker decoded A: the entry is A's, fingerprint and pixels")
        try project.add("x.jpg", from: Self.b)
        _ = try project.bake()
        let rolledBack = try #require(try Self.entry(project, "x.jpg"))
        #expect(rolledBack.source == b.source && rolledBack.checksum == b.checksum, "B's pixels are back")
    }

    /// A file written while it is read (its size changes between the stats before and after) is
    /// not baked from those bytes: a warning, the previous entry kept, and the next bake reads it
    /// again. Forced in the planner's read (a changed key) and in the worker's (a new key).
    @Test(arguments: ["x.jpg", "new.jpg"])
    func aFileWrittenWhileReadIsRetriedNextRun(_ key: String) throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        _ = try project.bake()
        let before = try Self.entry(project, "x.jpg")
        try project.add(key, from: Self.b)
        let append = try Self.hook(in: project, at: "source-opened", file: project.sources + "/" + key, "printf 'more' >> \"$3\"")
        let run = try Self.bake(project, hook: append)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("\(key): warning: the file changed while it was read") && run.stdout.contains("1 skipped"),
                "\(run.stdout)\(run.stderr)")
        #expect(try Self.entry(project, "x.jpg")?.source == before?.source, "the previous entry stays")
        let next = try Self.bake(project)
        #expect(next.status == 0 && next.stdout.contains("1 decoded"), "\(next.stdout)")
    }

    /// A changed source that fails keeps its key's last good entry, and says so.
    @Test func aChangedSourceThatFailsKeepsThePreviousImage() throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        _ = try project.bake()
        let before = try Self.entry(project, "x.jpg")
        let half = try Data(contentsOf: URL(fileURLWithPath: Self.b))
        project.add("x.jpg", bytes: Array(half.prefix(half.count / 3)))
        let run = try Self.bake(project, hook: nil, ["--format", "json"])
        #expect(run.status == 3)
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect((json["sources"] as? [String: Int])?["keptPrevious"] == 1)
        #expect(try Self.entry(project, "x.jpg")?.source == before?.source && before != nil)
        let text = try Self.bake(project)
        #expect(text.stdout.contains("1 kept the previous image"), "\(text.stdout)")
    }

    /// A source deleted after the scan listed it is removed, not failed.
    @Test func aSourceDeletedDuringTheBakeIsRemovedNotFailed() throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        try project.add("y.jpg", from: Self.b)
        let delete = try Self.hook(in: project, at: "planned", "rm '\(project.sources)/y.jpg'")
        let run = try Self.bake(project, hook: delete, ["--format", "json"])
        #expect(run.status == 0, "\(run.stdout)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["decoded"] == 1 && sources["failed"] == 0 && sources["removed"] == 1, "\(sources)")
    }

    /// Decoder warnings are reported per source, in text and JSON; `failOn: warning` refuses them.
    @Test func decoderWarningsAreReportedAndFailOnWarningRefusesThem() throws {
        let project = try Self.project()
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: Self.a))
        jpeg.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(jpeg.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        project.add("odd.jpg", bytes: Array(jpeg))
        let lenient = try Self.bake(project, hook: nil, ["--format", "json"])
        #expect(lenient.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: lenient.output) as? [String: Any])
        let warnings = try #require(json["warnings"] as? [String])
        #expect(warnings.contains { $0.hasPrefix(project.sources + "/odd.jpg: warning:") && $0.contains("Corrupt JPEG data") }, "\(warnings)")
        try FileManager.default.removeItem(atPath: project.tables)
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    failOn: warning\n") }
        let strict = try Self.bake(project)
        #expect(strict.status == 3 && strict.stderr.contains("odd.jpg: error:"), "\(strict.stderr)")
    }

    /// `--min-age` leaves a file written moments ago for a later bake; its previous entry stays.
    @Test func minAgeDefersFilesModifiedRecently() throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        project.setModified("x.jpg", secondsAgo: 600)
        _ = try project.bake()
        let before = try Self.entry(project, "x.jpg")
        try project.add("x.jpg", from: Self.b)
        try project.add("fresh.jpg", from: Self.b)
        let run = try Self.bake(project, hook: nil, ["--min-age", "60"])
        #expect(run.status == 0 && run.stdout.contains("0 decoded") && run.stdout.contains("2 deferred (--min-age)"), "\(run.stdout)")
        #expect(try Self.entry(project, "x.jpg")?.source == before?.source)
        let later = try Self.bake(project)
        #expect(later.stdout.contains("2 decoded"), "\(later.stdout)")
    }
}

/// Sources too large to bake are refused from their size, before a byte is read: neither the bake
/// nor a worker holds them in memory or spends time reading them.
@Suite struct SourceSizeTests {
    /// An 8 GiB sparse file named like a photo fails as `source-too-large` under the default limit,
    /// and a 2 MiB one under `--max-source-size 1MiB`; the real photo beside them bakes. strace
    /// shows neither large file is ever read (opened, at most, for its size).
    @Test func oversizedSourcesAreRefusedFromTheirSizeUnread() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("photo.jpg", from: Corpus.photo("Landscape_1.jpg"))
        for (name, size) in [("huge.jpg", Int64(8) << 30), ("two-mib.jpg", Int64(2) << 20)] {
            let fd = open(project.sources + "/" + name, O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
            close(fd)
        }
        let first = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        #expect(first.status == 3, "\(first.stderr)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.count == 1 && failures[0]["code"] as? String == "source-too-large"
                && (failures[0]["path"] as? String ?? "").hasSuffix("huge.jpg"), "\(failures)")
        let strict = try run(Products.imagetable, ["bake", project.manifestPath, "--max-source-size", "1MiB", "--rehash"])
        #expect(strict.status == 3 && strict.stderr.contains("two-mib.jpg") && strict.stderr.contains("[source-too-large]"), "\(strict.stderr)")
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--max-source-size", "lots"]).status == 64)
        if StateTests.hasStrace {
            let log = project.root + "/strace.log"
            _ = try run("/usr/bin/strace", ["-f", "-qq", "-e", "trace=read,pread64", "-e", "read=none", "-o", log,
                                           Products.imagetable, "bake", project.manifestPath, "--rehash"])
            let reads = try String(contentsOfFile: log, encoding: .utf8)
            // A read of the huge file would be of up to 1 MiB at a time; none may come near it.
            #expect(!reads.contains("1048576) = 1048576"), "a large source was read")
        }
    }
}

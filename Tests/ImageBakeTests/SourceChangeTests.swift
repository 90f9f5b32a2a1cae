import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

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

    /// The same race in JSON: the file is under `skipped` with its code and message, not under
    /// `failures`, and the bake is `ok`.
    @Test(arguments: ["x.jpg", "new.jpg"])
    func aFileWrittenWhileReadIsSkippedInJSON(_ key: String) throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        _ = try project.bake()
        try project.add(key, from: Self.b)
        let append = try Self.hook(in: project, at: "source-opened", file: project.sources + "/" + key, "printf 'more' >> \"$3\"")
        let run = try Self.bake(project, hook: append, ["--format", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(json["ok"] as? Bool == true && (json["failures"] as? [Any])?.isEmpty == true, "\(run.stdout)")
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["skipped"] == 1 && sources["failed"] == 0 && sources["decoded"] == 0, "\(sources)")
        let skipped = try #require(json["skipped"] as? [[String: String]])
        #expect(skipped == [["family": "photos", "key": key, "path": project.sources + "/" + key, "code": "changed-while-reading",
                             "message": "the file changed while it was read; it is read again on the next bake"]], "\(skipped)")
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

    /// Photo A with three junk bytes before its quantisation table: libjpeg warns ("Corrupt JPEG
    /// data"), and still decodes it.
    static func junkJPEG() throws -> [UInt8] {
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: a))
        jpeg.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(jpeg.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        return Array(jpeg)
    }

    /// libjpeg's warning for ``junkJPEG()``, as the bake reports it after the source's path.
    static let junkWarning = "warning: VipsJpeg: Corrupt JPEG data: 3 extraneous bytes before marker 0xdb"

    /// Decoder warnings are reported per source, in text and JSON; `failOn: warning` refuses them.
    @Test func decoderWarningsAreReportedAndFailOnWarningRefusesThem() throws {
        let project = try Self.project()
        project.add("odd.jpg", bytes: try Self.junkJPEG())
        let lenient = try Self.bake(project, hook: nil, ["--format", "json"])
        #expect(lenient.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: lenient.output) as? [String: Any])
        let warnings = try #require(warningLines(json))
        #expect(warnings == [project.sources + "/odd.jpg: " + Self.junkWarning], "\(warnings)")
        try FileManager.default.removeItem(atPath: project.tables)
        // In text, the same line on standard error, once, and the source baked.
        let text = try Self.bake(project)
        #expect(text.status == 0 && text.stdout.contains(": 1 decoded, 0 unchanged, 0 failed\n"), "\(text.stdout)")
        #expect(text.stderr == project.sources + "/odd.jpg: " + Self.junkWarning + "\n", "\(text.stderr)")
        try FileManager.default.removeItem(atPath: project.tables)
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    failOn: warning\n") }
        let strict = try Self.bake(project)
        #expect(strict.status == 3 && strict.stderr.contains("odd.jpg: error:"), "\(strict.stderr)")
    }

    /// `failOn: truncated` is the most lenient level: a JPEG with junk bytes bakes (its warning
    /// still reported), but a file that ends early still fails, and its key keeps its previous
    /// image (MANIFEST.md, "failOn").
    @Test func failOnTruncatedBakesDamagedDataButNotAFileThatEndsEarly() throws {
        let project = try Self.project()
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    failOn: truncated\n") }
        try project.add("x.jpg", from: Self.a)
        _ = try project.bake()
        let before = try #require(try Self.entry(project, "x.jpg"))
        project.add("odd.jpg", bytes: try Self.junkJPEG())
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.b))
        project.add("x.jpg", bytes: Array(whole.prefix(whole.count / 3)))
        let run = try Self.bake(project, hook: nil, ["--format", "json"])
        #expect(run.status == 3, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["decoded"] == 1 && sources["failed"] == 1 && sources["keptPrevious"] == 1, "\(sources)")
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.map { "\($0["key"] ?? "") \($0["code"] ?? "")" } == ["x.jpg truncated"], "\(failures)")
        #expect(warningLines(json) == [project.sources + "/odd.jpg: " + Self.junkWarning])
        #expect(try Self.entry(project, "odd.jpg") != nil, "the junk bytes are only a warning at this level")
        let after = try #require(try Self.entry(project, "x.jpg"))
        #expect(after.source == before.source && after.checksum == before.checksum, "the previous image is kept")
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

    /// Ages that are not a finite number of seconds up to 100 years are bad usage, not a crash
    /// (an infinite one trapped in its conversion to nanoseconds); through the API they are clamped.
    @Test func minAgeOutOfRangeIsBadUsage() throws {
        let project = try Self.project()
        try project.add("x.jpg", from: Self.a)
        for age in ["inf", "nan", "1e30", "-1"] {
            let run = try Self.bake(project, hook: nil, ["--min-age=\(age)"])
            #expect(run.status == 64 && run.stderr.contains("--min-age must be a number of seconds from 0 to 3153600000"),
                    "\(age): \(run.status) \(run.stderr)")
        }
        for age in [Double.infinity, .nan] {
            let summary = try project.bake { $0.minAge = age }
            #expect(age.isNaN ? summary.decoded == 1 : summary.deferred == 1 && summary.decoded == 0, "\(age)")
        }
    }
}

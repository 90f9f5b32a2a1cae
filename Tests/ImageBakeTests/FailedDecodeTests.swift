import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// Sources that fail while they are decoded (a JPEG that ends early): they write nothing, evict
/// nothing, and do not hold a slot that a good source could have had.
@Suite struct FailedDecodeTests {
    static let grey = "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 2\n"

    /// A JPEG cut short: its header reads, its decode fails (`truncated`).
    static func addBroken(_ project: BakeProject, _ key: String) throws {
        let photo = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Portrait_1")))
        project.add(key, bytes: Array(photo.prefix(4000)))
    }

    static func keys(_ project: BakeProject) throws -> Set<String> {
        Set(try ImageTableReader(path: project.tables + "/g.imagetable").entries().map(\.key))
    }

    /// A source the tables hold, overwritten with bytes that are not an image: skipped, its entry
    /// kept, at the bake that finds it and at every bake after. The second bake trusted the
    /// file's stat and forgot that it was not an image: it sent it to a worker, which failed it
    /// (`unsupported-format`, the old image kept, exit 3), and later bakes alternated the two.
    @Test func aHeldSourceThatIsNoLongerAnImageStaysSkipped() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("a.jpg", secondsAgo: 300)
        _ = try project.bake()
        let table = project.tables + "/g.imagetable"
        let kept = try #require(try ImageTableReader(path: table).entry(forKey: "a.jpg"))
        project.add("a.jpg", bytes: Array("not a picture\n".utf8))
        // Old enough for the state to trust its stat at the next bake.
        project.setModified("a.jpg", secondsAgo: 100)
        for bake in 1...3 {
            let summary = try project.bake()
            #expect(summary.failed.isEmpty && summary.keptPrevious == 0 && summary.decoded == 0, "bake \(bake): \(summary.failed)")
            #expect(summary.skipped.map { "\($0.key) \($0.error.code.rawValue)" } == ["a.jpg not-an-image"], "bake \(bake)")
            let entry = try ImageTableReader(path: table).entry(forKey: "a.jpg")
            #expect(entry?.sourceUUID == kept.sourceUUID && entry?.pixelChecksum == kept.pixelChecksum, "bake \(bake)")
        }
    }

    /// A table of two slots holds `c-old.jpg`; `a-broken.jpg` and `b-good.jpg` arrive, newer, so
    /// the plan selects both and evicts `c-old.jpg` for the one that finds no free slot. The broken
    /// source is first in the plan, and a hook holds its worker until the good one has decoded on
    /// the other worker. Had the broken source taken the free slot before decoding, the good one
    /// would have evicted `c-old.jpg` and the failure left that slot empty; each source now takes
    /// its slot once decoded, so the good one gets the free slot and `c-old.jpg` stays.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/comm"), "the hook tells a worker by /proc/PID/comm"))
    func aSourceThatFailsToDecodeCostsNoEntryWhateverTheOrder() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("c-old.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("c-old.jpg", secondsAgo: 300)
        _ = try project.bake()
        try Self.addBroken(project, "a-broken.jpg")
        project.setModified("a-broken.jpg", secondsAgo: 200)
        try project.add("b-good.jpg", from: Corpus.photo("Landscape_2"))
        project.setModified("b-good.jpg", secondsAgo: 100)
        let hook = project.root + "/hold-broken"
        try writeExecutable("""
            #!/bin/sh
            # Only in a worker (the bake's own process reads the file's head first), only for the broken file.
            [ "$1" = "source-read" ] && [ "$3" = "\(project.sources)/a-broken.jpg" ] \\
              && [ "$(cat /proc/$2/comm)" = "imagetable-work" ] && sleep 1
            exit 0

            """, to: hook)
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--jobs", "2", "--format", "json"],
                          environment: ["IMAGETABLE_TEST_HOOK": hook])
        #expect(run.status == 3, "\(run.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let table = try #require((document["tables"] as? [[String: Any]])?.first)
        #expect(table["written"] as? Int == 1 && table["evicted"] as? Int == 0, "\(table)")
        #expect(try Self.keys(project) == ["b-good.jpg", "c-old.jpg"])
    }

    /// `imagetable bake --format json` in `project`, parsed: its status, `sources` counts and
    /// failures' messages.
    static func bake(_ project: BakeProject, _ extra: [String] = []) throws -> (status: Int32, counts: [String: Int], failures: [String]) {
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"] + extra)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
        let failures = (document["failures"] as? [[String: Any]] ?? []).map { "\($0["code"] ?? ""): \($0["message"] ?? "")" }
        return (run.status, try #require(document["sources"] as? [String: Int]), failures)
    }

    static let remembered = "(at an earlier bake; the file has not changed since, so it is not decoded again until it does, or with --rehash)"

    /// A broken source, the newest of three for two slots, fails to decode: the first bake leaves
    /// the oldest good one out. The next bake remembers the failure (the file is unchanged): the
    /// broken source is reported again without a decode and no longer takes a place in the
    /// selection, so the good one gets the slot and the table fills; later bakes do nothing. A
    /// change to the file, `--rehash` or a change of the family's formats decodes it again.
    @Test func aSourceThatFailedToDecodeIsNotDecodedAgainUntilItChanges() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("a.jpg", secondsAgo: 300)
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        project.setModified("b.jpg", secondsAgo: 200)
        try Self.addBroken(project, "c.jpg")
        project.setModified("c.jpg", secondsAgo: 100)

        let first = try Self.bake(project)
        #expect(first.status == 3 && first.counts["decoded"] == 1 && first.counts["failed"] == 1 && first.counts["leftOut"] == 1,
                "\(first.counts)")
        #expect(first.failures == ["truncated: the image data ends early"], "decoded, and failed: \(first.failures)")
        #expect(try Self.keys(project) == ["b.jpg"])

        // `--list` says which source is known to fail, without decoding it.
        let list = try run(Products.imagetable, ["bake", project.manifestPath, "--list", "--format", "json"])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let failures = (listed["sources"] as? [[String: String]] ?? []).compactMap { item in item["failure"].map { "\(item["key"]!): \($0)" } }
        #expect(failures == ["c.jpg: truncated"], "\(listed)")
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--list"])
        #expect(text.stdout.contains("c.jpg  (fails: truncated)\n"), "\(text.stdout)")
        // "2 new" read as two sources to bake: the count says one of them fails.
        #expect(text.stderr.hasSuffix("3 listed: 2 new, 1 unchanged; 1 of them known to fail (the lines marked 'fails:')\n"), "\(text.stderr)")

        let second = try Self.bake(project)
        #expect(second.status == 3 && second.counts["decoded"] == 1 && second.counts["failed"] == 1 && second.counts["leftOut"] == 0,
                "\(second.counts)")
        #expect(second.failures == ["truncated: the image data ends early " + Self.remembered], "\(second.failures)")
        #expect(try Self.keys(project) == ["a.jpg", "b.jpg"])
        let third = try Self.bake(project)
        #expect(third.counts["decoded"] == 0 && third.counts["unchanged"] == 2 && third.failures.count == 1)

        let rehash = try Self.bake(project, ["--rehash"])
        #expect(rehash.failures == ["truncated: the image data ends early"], "--rehash decodes it again: \(rehash.failures)")
        #expect(try Self.bake(project).failures == ["truncated: the image data ends early " + Self.remembered])
        try project.editManifest { $0.replacingOccurrences(of: "size: 8x8", with: "size: 9x9") }
        let resized = try Self.bake(project)
        #expect(resized.failures == ["truncated: the image data ends early"], "other formats decode it again: \(resized.failures)")
        try Self.addBroken(project, "c.jpg")  // rewritten: a new stat
        project.setModified("c.jpg", secondsAgo: 50)
        #expect(try Self.bake(project).failures == ["truncated: the image data ends early"], "a changed file is decoded again")
    }

    /// The failures table's paths, sorted, as Python prints a list.
    static func rows(_ project: BakeProject) throws -> String {
        let query = try run("/usr/bin/env", ["python3", "-c", """
            import sqlite3, sys
            print(sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT path FROM failures')))
            """, project.tables + "/.imagetable-state.sqlite"])
        return query.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A failure is remembered with the settings it happened under: a bake under others decodes
    /// the file, and leaves the failure (it is not that bake's to forget while the file is
    /// there), yet a bake under the first settings again finds the entry unchanged and fails
    /// nothing, since the tables hold the bytes (CI jobs that differ in `--max-pixels`).
    @Test func aFailureUnderOtherSettingsFailsNothing() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        project.setModified("a.jpg", secondsAgo: 100)
        let small = try Self.bake(project, ["--max-pixels", "1000"])
        #expect(small.status == 3 && small.failures.first?.hasPrefix("too-many-pixels: ") == true, "\(small.failures)")
        #expect(try Self.rows(project) == "['src/a.jpg']")
        let large = try Self.bake(project)
        #expect(large.status == 0 && large.counts["decoded"] == 1)
        #expect(try Self.rows(project) == "['src/a.jpg']", "a failure under other settings stays while its file is there")
        let again = try Self.bake(project, ["--max-pixels", "1000"])
        #expect(again.status == 0 && again.counts["unchanged"] == 1 && again.failures.isEmpty, "\(again.failures)")
    }

    /// A JPEG with extraneous bytes before a marker, refused under `failOn: warning`, names the
    /// decoder's complaint once: libvips writes it into its buffer at each pass over the file,
    /// and the cause said the same sentence four times.
    @Test func aRefusedWarningIsSaidOnce() throws {
        let project = try BakeProject(formats: Self.grey)
        var jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1"))))
        let dqt = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDB })
        jpeg.insert(contentsOf: [0, 1, 2], at: dqt)
        project.add("x.jpg", bytes: jpeg)
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    failOn: warning\n") }
        let run = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
        let cause = try #require((document["failures"] as? [[String: Any]])?.first?["cause"] as? String, "\(document)")
        #expect(cause == "VipsJpeg: Corrupt JPEG data: 3 extraneous bytes before marker 0xdb", "\(cause)")
    }

    /// Two manifests that share an output directory and a sources directory, under other
    /// settings, keep each other's failures: the second's bake forgot the first's, so that with
    /// `failOn: warning` beside `failOn: truncated` the first decoded a file again at every bake
    /// and left a good source out for it (from a review of re-bakes). A file that is gone loses
    /// its rows, whichever manifest's bake sees that.
    @Test func anotherManifestsBakeKeepsItsFailures() throws {
        let project = try BakeProject(formats: Self.grey)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let other = project.root + "/other.yaml"
        try String(contentsOfFile: project.manifestPath, encoding: .utf8).replacingOccurrences(of: "      g:", with: "      h:")
            .write(toFile: other, atomically: true, encoding: .utf8)
        let first = try Self.bake(project, ["--max-pixels", "1000"])
        #expect(first.failures.count == 1 && first.failures[0].hasPrefix("too-many-pixels: "), "\(first.failures)")
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
        #expect(try Self.rows(project) == "['src/a.jpg']")
        try FileManager.default.removeItem(atPath: project.sources + "/a.jpg")
        #expect(try run(Products.imagetable, ["bake", other]).status == 0)
        #expect(try Self.rows(project) == "[]")
    }

    /// A project whose broken `c.jpg`, old enough for its stat to be trusted, has been baked
    /// once, so the state remembers its failure.
    static func rememberingABrokenSource() throws -> BakeProject {
        let project = try BakeProject(formats: Self.grey)
        try Self.addBroken(project, "c.jpg")
        project.setModified("c.jpg", secondsAgo: 100)
        _ = try Self.bake(project)
        return project
    }

    /// A file changed since its failure (here left for later by `--min-age`, so not decoded)
    /// loses its row: the row says nothing of its new bytes.
    @Test func aChangedFileLosesItsFailureEvenUndecoded() throws {
        let project = try Self.rememberingABrokenSource()
        #expect(try Self.rows(project) == "['src/c.jpg']")
        try project.add("c.jpg", from: Corpus.photo("Landscape_1"))
        let deferred = try Self.bake(project, ["--min-age", "60"])
        #expect(deferred.counts["deferred"] == 1 && deferred.counts["decoded"] == 0 && deferred.failures.isEmpty, "\(deferred)")
        #expect(try Self.rows(project) == "[]")
    }

    /// A file refused before its decode (over a lower `--max-source-size` for one bake) keeps
    /// its remembered failure: the row was forgotten as if the file were gone, and the next bake
    /// decoded it again and let it take a place in the selection.
    @Test func aFileRefusedForItsSizeKeepsItsFailure() throws {
        let project = try Self.rememberingABrokenSource()
        #expect(try Self.rows(project) == "['src/c.jpg']")
        let refused = try Self.bake(project, ["--max-source-size", "10B"])
        #expect(refused.failures.count == 1 && refused.failures[0].hasPrefix("source-too-large"), "\(refused.failures)")
        #expect(try Self.rows(project) == "['src/c.jpg']")
        #expect(try Self.bake(project).failures == ["truncated: the image data ends early " + Self.remembered])
    }

    /// `--strict` stops at a failure known before decoding (a decode that failed at an earlier
    /// bake) before any source is sent: the new source beside it is not decoded.
    @Test func strictStopsBeforeDecodingAtARememberedFailure() throws {
        let project = try Self.rememberingABrokenSource()
        try project.add("d.jpg", from: Corpus.photo("Landscape_1"))
        let strict = try Self.bake(project, ["--strict"])
        #expect(strict.status == 1 && strict.counts["decoded"] == 0 && strict.failures.count == 1, "\(strict)")
        #expect(try Self.keys(project).isEmpty)
    }

    /// Once the file decodes, or is gone, the state forgets its failure.
    @Test func aFailureIsForgottenOnceItsFileDecodesOrIsGone() throws {
        let project = try BakeProject(formats: Self.grey)
        try Self.addBroken(project, "c.jpg")
        try Self.addBroken(project, "d.jpg")
        project.setModified("c.jpg", secondsAgo: 100)
        project.setModified("d.jpg", secondsAgo: 100)
        _ = try Self.bake(project)
        #expect(try Self.rows(project) == "['src/c.jpg', 'src/d.jpg']")
        try project.add("c.jpg", from: Corpus.photo("Landscape_1"))
        try FileManager.default.removeItem(atPath: project.sources + "/d.jpg")
        let fixed = try Self.bake(project)
        #expect(fixed.status == 0 && fixed.counts["decoded"] == 1)
        #expect(try Self.rows(project) == "[]")
    }
}

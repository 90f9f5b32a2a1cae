import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sources too large to bake are refused from their size, before a byte is read: neither the bake
/// nor a worker holds them in memory or spends time reading them.
@Suite struct SourceSizeTests {
    /// An 8 GiB sparse file named like a photo fails as `source-too-large` under the default limit,
    /// and a 2 MiB one under `--max-source-size 1MiB`; the real photo beside them bakes.
    /// ``anOversizedSourceIsNeverRead()`` shows the large file is never read.
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
    }

    /// The 8 GiB source is never read by the bake or its workers: strace (with `-y`, which names
    /// each descriptor's file) sees no `read` or `pread64` of it that returns a byte.
    @Test(.enabled(if: StateTests.hasStrace, "make test installs strace"))
    func anOversizedSourceIsNeverRead() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("photo.jpg", from: Corpus.photo("Landscape_1.jpg"))
        let fd = open(project.sources + "/huge.jpg", O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, off_t(8) << 30) == 0)
        close(fd)
        let log = project.root + "/strace.log"
        let traced = try run("/usr/bin/strace", ["-f", "-qq", "-y", "-e", "trace=read,pread64", "-e", "read=none", "-o", log,
                                                Products.imagetable, "bake", project.manifestPath, "--jobs", "1"])
        #expect(traced.status == 3, "the photo bakes, the huge file fails: \(traced.stderr)")
        let reads = try Self.bytesRead(log: String(contentsOfFile: log, encoding: .utf8), of: "/huge.jpg")
        #expect(reads.bytes == 0, "\(reads.bytes) bytes of the oversized source were read")
        // The parser itself: the photo, which a worker reads whole (after the planner's peek), is seen read.
        let photoBytes = try #require(try FileManager.default.attributesOfItem(atPath: project.sources + "/photo.jpg")[.size] as? Int)
        #expect(try Self.bytesRead(log: String(contentsOfFile: log, encoding: .utf8), of: "/photo.jpg").bytes >= photoBytes)
    }

    /// The bytes that `read` and `pread64` calls returned from descriptors of a file whose path
    /// ends with `suffix`, in an `strace -f -y` log (a call split by another thread's is
    /// "<unfinished ...>" and then "<... read resumed>" on the same thread).
    static func bytesRead(log: String, of suffix: String) -> (calls: Int, bytes: Int) {
        var pending: Set<Substring> = []
        var calls = 0, bytes = 0
        for line in log.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let thread = line[..<space], call = line[space...].drop { $0 == " " }
            let counted: Bool
            if call.hasPrefix("read(") || call.hasPrefix("pread64(") {
                let matches = call.contains(suffix + ">,")
                if call.hasSuffix("<unfinished ...>") {
                    if matches { pending.insert(thread) }
                    continue
                }
                counted = matches
            } else if call.hasPrefix("<... read resumed>") || call.hasPrefix("<... pread64 resumed>") {
                counted = pending.remove(thread) != nil
            } else {
                continue
            }
            guard counted, let equals = call.range(of: " = ", options: .backwards) else { continue }
            calls += 1
            bytes += max(0, Int(call[equals.upperBound...].prefix { $0 == "-" || $0.isNumber }) ?? 0)
        }
        return (calls, bytes)
    }
}

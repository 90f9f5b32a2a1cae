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

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// What a bake asks of the disk: a full table's evictions are made durable a batch at a time,
/// not one synchronous flush per evicting write.
@Suite struct FlushTests {
    /// `msync` and `fdatasync` calls of an `imagetable bake` of `project`, from `strace -f`.
    static func flushes(_ project: BakeProject) throws -> (status: Int32, msync: Int, fdatasync: Int) {
        let log = project.root + "/strace.log"
        let result = try run("/usr/bin/strace", ["-f", "-qq", "-e", "trace=msync,fdatasync", "-o", log, Products.imagetable, "bake",
                                                 project.manifestPath, "--no-progress", "--jobs", "2"])
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        return (result.status, lines.filter { $0.contains("msync(") }.count, lines.filter { $0.contains("fdatasync(") }.count)
    }

    /// 36 sources replace the 36 entries of a full table: every write evicts. The removal of each
    /// evicted entry must be on disk before its slot takes new pixels; it used to cost one msync
    /// per eviction, it now costs one flush per batch of the plan (batches of 9 here).
    @Test func evictionsAreFlushedOncePerBatch() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 36\n")
        let tiles = PhotoTiles.first(72)
        try #require(tiles.count == 72, "vips dzsave made no tiles")
        for (i, tile) in tiles.prefix(36).enumerated() { try project.add("old-\(i).jpg", from: tile) }
        let first = try Self.flushes(project)
        #expect(first.status == 0)
        for i in 0..<36 { try FileManager.default.removeItem(atPath: project.sources + "/old-\(i).jpg") }
        for (i, tile) in tiles.suffix(36).enumerated() { try project.add("new-\(i).jpg", from: tile) }
        let second = try Self.flushes(project)
        #expect(second.status == 0)
        let table = try ImageTableReader(path: project.tables + "/thumb.imagetable")
        #expect(table.entries().count == 36 && table.entries().allSatisfy { $0.key.hasPrefix("new-") })
        // Four batches: each flushes the removals, then the pixels and buckets, then the records.
        #expect(second.msync + second.fdatasync <= 4 * 4 + 4, "msync \(second.msync), fdatasync \(second.fdatasync)")
        #expect(second.fdatasync >= 4, "the removals and the pixels are still flushed before publishing")
        #expect(TableVerifier.verify(path: project.tables + "/thumb.imagetable").isValid)
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// The sharded bake of docs/SCALE.md, run as it says: four shards of 240 real-photo sources
/// baked by GNU parallel, merged, equal a bake of all of them on one machine, key for key and
/// byte for byte; merged in another order, the tables are identical files; and a shard of
/// another manifest is refused.
@Suite struct ParallelShardTests {
    static let formats = """
              thumb:
                size: 20x16
                style: 32BitBGRA
                maximumCount: 400
                cornerRadius: 3
              grey:
                size: 12x12
                style: 8BitGrayscale
                maximumCount: 100

        """

    /// Every entry of a table by key: its source UUID, content rectangle and pixel bytes.
    static func contents(_ path: String) throws -> [String: String] {
        let reader = try ImageTableReader(path: path)
        var out: [String: String] = [:]
        for info in reader.entries() {
            let pixels = try #require(try reader.withImage(entityUUID: info.entityUUID) { Data($0.bytes) })
            out[info.key] = "\(info.sourceUUID) \(info.contentRect) \(pixels.base64EncodedString())"
        }
        return out
    }

    @Test func fourShardsBakedByGNUParallelAndMergedEqualOneBake() throws {
        let project = try BakeProject(formats: Self.formats)
        let tiles = PhotoTiles.first(240)
        try #require(tiles.count == 240, "vips dzsave made \(tiles.count) tiles")
        for (i, tile) in tiles.enumerated() {
            try project.add(String(format: "p%03d/t%03d.jpg", i / 60, i), from: tile)
            project.setModified(String(format: "p%03d/t%03d.jpg", i / 60, i), secondsAgo: 5000 + 13 * ((i * 37) % 240))
        }
        // The command of docs/SCALE.md, run by GNU parallel in the project's directory.
        let shell = "parallel imagetable bake manifest.yaml --shard {}/4 --output shards/{} --no-progress --jobs 1 ::: 0 1 2 3"
        let sharded = try run("/bin/sh", ["-c", shell], in: project.root,
                              environment: ["PATH": Products.directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        #expect(sharded.status == 0, "\(sharded.stdout)\(sharded.stderr)")
        #expect(sharded.stdout.components(separatedBy: "sources of shard ").count == 5, "\(sharded.stdout)")
        let merged = try run(Products.imagetable, ["merge", "merged", "shards/0", "shards/1", "shards/2", "shards/3"], in: project.root)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout.hasPrefix("merged: merged 4 shards in "), "\(merged.stdout)")
        let single = try run(Products.imagetable, ["bake", "manifest.yaml", "--no-progress"], in: project.root)
        #expect(single.status == 0, "\(single.stderr)")

        for name in ["thumb.imagetable", "grey.imagetable"] {
            let one = try Self.contents(project.tables + "/" + name)
            let many = try Self.contents(project.root + "/merged/" + name)
            #expect(one.count == (name == "grey.imagetable" ? 100 : 240), "\(name): \(one.count) entries")
            #expect(Set(many.keys) == Set(one.keys), "\(name): the merge kept other keys than one bake")
            #expect(many == one, "\(name): entries differ from one bake's")
            #expect(TableVerifier.verify(path: project.root + "/merged/" + name).isValid)
        }

        let reversed = try run(Products.imagetable, ["merge", "reversed", "shards/3", "shards/2", "shards/1", "shards/0"], in: project.root)
        #expect(reversed.status == 0)
        for name in ["thumb.imagetable", "grey.imagetable"] {
            let a = FileManager.default.contents(atPath: project.root + "/merged/" + name)
            #expect(a != nil && a == FileManager.default.contents(atPath: project.root + "/reversed/" + name), "\(name) differs by order")
        }

        // A shard of another manifest: one format drawn with other corners.
        try project.editManifest { $0.replacingOccurrences(of: "cornerRadius: 3", with: "cornerRadius: 4") }
        let other = try run(Products.imagetable, ["bake", "manifest.yaml", "--shard", "2/4", "--output", "other-2", "--no-progress"],
                            in: project.root)
        #expect(other.status == 0)
        let refused = try run(Products.imagetable, ["merge", "merged", "shards/0", "shards/1", "other-2", "shards/3"], in: project.root)
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("other-2/thumb.imagetable: error: was made with other parameters than shards/0/thumb.imagetable "
                                         + "(parameter hash "), "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("): the directories were not baked from one manifest [manifest-mismatch]\n"))
        #expect(try Self.contents(project.root + "/merged/thumb.imagetable").count == 240, "the refused merge changed nothing")
    }
}

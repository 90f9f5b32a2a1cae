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

    /// A table of two slots holds `c-old.jpg`; `a-broken.jpg` and `b-good.jpg` arrive, newer, so
    /// the plan selects both and evicts `c-old.jpg` for the one that finds no free slot. The broken
    /// source is first in the plan, and a hook holds its worker until the good one has decoded on
    /// the other worker. Had the broken source taken the free slot before decoding, the good one
    /// would have evicted `c-old.jpg` and the failure left that slot empty; each source now takes
    /// its slot once decoded, so the good one gets the free slot and `c-old.jpg` stays.
    @Test func aSourceThatFailsToDecodeCostsNoEntryWhateverTheOrder() throws {
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
}

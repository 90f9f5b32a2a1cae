import Foundation
import ImageTableCore
import TestSupport
import Testing

/// Entries record when their source was last modified, so that `imagetable merge` can rank
/// entries from several shards by the rule a bake ranks sources by.
@Suite struct SourceTimeTests {
    @Test func entriesRecordTheirSourcesModificationTime() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 16x16\n        style: 8BitGrayscale\n        maximumCount: 8\n")
        for (i, tile) in PhotoTiles.first(3).enumerated() { try project.add("t\(i).jpg", from: tile) }
        project.setModified("t1.jpg", secondsAgo: 86_400)
        _ = try project.bake()
        let reader = try ImageTableReader(path: project.tables + "/thumb.imagetable")
        for i in 0..<3 {
            let stat = try #require(FileStat(path: project.sources + "/t\(i).jpg"))
            #expect(reader.entry(forKey: "t\(i).jpg")?.sourceModifiedNs == stat.modifiedNs, "t\(i).jpg")
        }
    }
}

import Foundation
import TestSupport
import Testing

/// Progress before rendering: a bake that lists or checks its sources for long says so, where a
/// first bake of 300,000 sources showed nothing for 21 s. The test hook holds each stage for
/// longer than the half second a stage must last to be shown, as 100,000 sources would.
@Suite struct StageProgressTests {
    static let sources = 20

    static func project() throws -> BakeProject {
        let project = try BakeProject(formats: "      g:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 200\n")
        for i in 0..<sources { try project.add("s\(i).png", from: Corpus.png("basn2c08")) }
        // Names the scan looks at and does not take: the listing reports every 64 names.
        for i in 0..<100 { project.add("notes-\(i).txt", bytes: []) }
        return project
    }

    @Test func aLogShowsListingAndCheckingThatLast() throws {
        let project = try Self.project()
        let hook = project.root + "/hook"
        try writeExecutable("#!/bin/sh\ncase \"$1\" in listing|checking) sleep 0.7 ;; esac\n", to: hook)
        let result = try run(Products.imagetable, ["bake", "--progress", "manifest.yaml"], in: project.root,
                             environment: ["IMAGETABLE_TEST_HOOK": hook])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let listing = try #require(lines.firstIndex { $0.hasPrefix("progress: listing sources, ") }, "\(lines)")
        let found = Int(lines[listing].dropFirst("progress: listing sources, ".count).prefix { $0.isNumber }) ?? -1
        #expect((0...Self.sources).contains(found), "\(lines[listing])")
        // At the first source read past the half second, and at once, since the stage is new.
        let checking = try #require(lines.firstIndex { $0.hasPrefix("progress: checking 1/\(Self.sources) new or changed sources, ") },
                                    "\(lines)")
        let rendered = try #require(lines.lastIndex { $0.hasPrefix("progress: \(Self.sources)/\(Self.sources) sources to decode, ") },
                                    "\(lines)")
        #expect(listing < checking && checking < rendered)
        #expect(lines.filter { $0.contains("listing") || $0.contains("checking") }.count == 2, "one line each: \(lines)")

        // Stages over in less than half a second are not shown: the common case.
        let quick = try run(Products.imagetable, ["bake", "--progress", "--rehash", "manifest.yaml"], in: project.root)
        #expect(quick.status == 0)
        #expect(!quick.stderr.contains("listing") && !quick.stderr.contains("checking"), "\(quick.stderr)")
        #expect(quick.stderr.contains("progress: 0/0 sources to decode, "), "\(quick.stderr)")
    }
}

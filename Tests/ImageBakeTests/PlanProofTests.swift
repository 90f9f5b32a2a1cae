import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The plan is what the bake does: over randomised scenarios (sources added, removed, changed,
/// touched, failing; tables full and not; two families, several scales, with and without
/// `--prune`), a dry run's counts and keys equal what the real bake then does.
@Suite struct PlanProofTests {
    /// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    }

    static func manifest(_ r: inout Random) -> String {
        """
        version: 1
        output: tables
        families:
          a:
            sources: src-a
            formats:
              a1:
                size: 6x6
                style: 32BitBGRA
                maximumCount: \(r.int(1...5))
              a2:
                size: 4x3
                scales: [1, 2]
                style: 8BitGrayscale
                fit: inside
                maximumCount: \(r.int(2...7))
          b:
            sources: src-b
            formats:
              b1:
                size: 5x5
                style: 16BitBGR
                maximumCount: \(r.int(2...5))

        """
    }

    /// One random change to a family's sources.
    static func mutate(_ project: BakeProject, _ directory: String, _ r: inout Random) throws {
        let dir = project.root + "/" + directory
        let present = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        let key = "k\(r.int(0...11)).png"
        let path = dir + "/" + key
        switch r.int(0...19) {
        case 0...8:  // add, or replace with other bytes
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: Corpus.png(ConvergenceTests.pool[r.int(0...23)]), toPath: path)
            setModified(path, secondsAgo: r.int(10...400))
        case 9...12:  // remove
            if let victim = present.randomElement(using: &r) { try FileManager.default.removeItem(atPath: dir + "/" + victim) }
        case 13...15:  // touch: a new stat over the same bytes
            if let touched = present.randomElement(using: &r) { setModified(dir + "/" + touched, secondsAgo: r.int(10...400)) }
        case 16, 17:  // fails before decoding: empty
            try? FileManager.default.removeItem(atPath: path)
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            setModified(path, secondsAgo: r.int(10...400))
        default:  // not an image: skipped
            try? FileManager.default.removeItem(atPath: path)
            _ = FileManager.default.createFile(atPath: path, contents: Data("not an image".utf8))
            setModified(path, secondsAgo: r.int(10...400))
        }
    }

    static func setModified(_ path: String, secondsAgo: Int) {
        try? FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-Double(secondsAgo))], ofItemAtPath: path)
    }

    @Test(arguments: 0..<16)
    func aDryRunPredictsTheBake(seed: Int) throws {
        var r = Random(state: UInt64(seed) &* 7919 &+ 17)
        let project = try BakeProject()
        try Self.manifest(&r).write(toFile: project.manifestPath, atomically: true, encoding: .utf8)
        for directory in ["src-a", "src-b"] {
            try FileManager.default.createDirectory(atPath: project.root + "/" + directory, withIntermediateDirectories: true)
            for _ in 0..<r.int(3...12) { try Self.mutate(project, directory, &r) }
        }
        for round in 0..<3 {
            let prune = r.chance(40)
            let plan = try project.bake(jobs: 2) { $0.dryRun = true; $0.prune = prune }
            let before = try project.entries()
            let bake = try project.bake(jobs: 2) { $0.prune = prune }
            let context = "seed \(seed) round \(round)"
            #expect(plan.decoded == bake.decoded && plan.unchanged == bake.unchanged && plan.leftOut == bake.leftOut, "\(context)")
            #expect(plan.removed == bake.removed && plan.keptPrevious == bake.keptPrevious, "\(context)")
            #expect(plan.failed.map(\.key) == bake.failed.map(\.key) && plan.skipped.map(\.key) == bake.skipped.map(\.key), "\(context)")
            #expect(plan.tables == bake.tables, "\(context)")
            // The keys: what the table held, less the plan's evictions and prunes, plus its writes.
            let after = try project.entries()
            for (change, table) in zip(try #require(plan.plan).tables, plan.tables) {
                let name = String(table.path.split(separator: "/").last!)
                let expected = Set(before[name]?.keys.map { $0 } ?? []).subtracting(change.evictions).subtracting(change.prunes)
                    .union(change.writes)
                #expect(Set(after[name]?.keys.map { $0 } ?? []) == expected, "\(context) \(name)")
            }
            // A quiet re-bake does nothing: the bake converged.
            let quiet = try project.bake(jobs: 2) { $0.prune = prune }
            #expect(quiet.decoded == 0 && quiet.tables.allSatisfy { $0.written == 0 && $0.evicted == 0 && $0.pruned == 0 }, "\(context)")
            for directory in ["src-a", "src-b"] {
                for _ in 0..<r.int(2...7) { try Self.mutate(project, directory, &r) }
            }
        }
    }
}

extension PlanProofTests.Random: RandomNumberGenerator {}

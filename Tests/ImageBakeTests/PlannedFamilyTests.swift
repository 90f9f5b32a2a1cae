import ImageManifest
import ImageTableCore
import Testing
@testable import ImageBake

/// The plan holds each family once (``PlannedFamily``: the scan's files, a status byte each, the
/// removed keys) and its jobs as positions in it; the listing `bake --list` prints, the statuses
/// the summary asks for and each job's source, tables and status come from there.
struct PlannedFamilyTests {
    private static func files(_ keys: [String]) -> [SourceFile] {
        keys.map { SourceFile(key: $0, root: "/src", stat: FileStat(device: 1, inode: 2, size: 3, modifiedNs: 4, changedNs: 5)) }
    }

    /// Two families listed in manifest order "zebra", "apple": the listing is sorted by family
    /// name, and within one by key, removed keys merged between the present ones.
    private static func plan() -> BakePlan {
        var plan = BakePlan()
        plan.families = ["zebra", "apple"]
        let zebra = PlannedFamily(index: 0, name: "zebra", files: files(["b", "d"]), statuses: [.new, .unchanged],
                                  removed: ["a", "c", "e"], tableLists: [[], [0, 1]])
        let apple = PlannedFamily(index: 1, name: "apple", files: files(["x"]), statuses: [.changed], removed: [], tableLists: [[], [2]])
        plan.planned = [zebra, apple]
        plan.jobs = [BakePlan.Job(zebra, position: 0, list: 1), BakePlan.Job(apple, position: 0, list: 1)]
        return plan
    }

    @Test func theListingIsSortedByFamilyThenKeyWithRemovedKeysMergedIn() {
        let listing = Self.plan().listing.map { "\($0.family)/\($0.key) \($0.status.rawValue)" }
        #expect(listing == ["apple/x changed", "zebra/a removed", "zebra/b new", "zebra/c removed", "zebra/d unchanged", "zebra/e removed"])
    }

    @Test func aKeysStatusIsFoundAmongTheSourcesThenTheRemovedKeys() {
        let plan = Self.plan()
        #expect(plan.status(family: "zebra", key: "b") == .new)
        #expect(plan.status(family: "zebra", key: "d") == .unchanged)
        #expect(plan.status(family: "zebra", key: "c") == .removed)
        #expect(plan.status(family: "zebra", key: "e") == .removed)
        #expect(plan.status(family: "zebra", key: "x") == nil, "another family's key")
        #expect(plan.status(family: "zebra", key: "f") == nil, "past every key")
        #expect(plan.status(family: "apple", key: "x") == .changed)
        #expect(plan.status(family: "mango", key: "x") == nil)
        #expect(plan.sourceCount == 3 && plan.removedCount == 3)
    }

    /// A job is a position in its family: 16 bytes, where a copy of the file made it 96.
    @Test func aJobReadsItsSourceTablesAndStatusFromItsFamily() {
        let jobs = Self.plan().jobs
        #expect(jobs.map(\.source.key) == ["b", "x"])
        #expect(jobs.map(\.family) == [0, 1])
        #expect(jobs.map(\.tables) == [[0, 1], [2]])
        #expect(jobs.map(\.status) == [.new, .changed])
        #expect(MemoryLayout<BakePlan.Job>.stride == 16)
    }
}

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
        plan.jobs = [BakePlan.Job(zebra, position: 0, list: 1, status: .new), BakePlan.Job(apple, position: 0, list: 1, status: .changed)]
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

    /// A family with under half its sources to decode keeps, for the run, only those sources'
    /// files (and every key): the listing, the statuses and every job read the same after.
    @Test func compactingKeepsOnlyTheJobsFilesAndChangesNothingElse() {
        var plan = BakePlan()
        plan.families = ["big", "busy"]
        let keys = (0..<10).map { "k\($0)" }
        let statuses: [BakePlan.SourceStatus] = [.unchanged, .new, .unchanged, .unchanged, .changed, .unchanged, .unchanged, .unchanged, .unchanged, .unchanged]
        let big = PlannedFamily(index: 0, name: "big", files: Self.files(keys), statuses: statuses, removed: ["k35", "zz"], tableLists: [[], [0], [0, 1]])
        let busy = PlannedFamily(index: 1, name: "busy", files: Self.files(["a", "b"]), statuses: [.new, .unchanged], removed: [], tableLists: [[], [2]])
        plan.planned = [big, busy]
        plan.jobs = [BakePlan.Job(big, position: 1, list: 2, status: .new), BakePlan.Job(big, position: 4, list: 1, status: .changed),
                     BakePlan.Job(busy, position: 0, list: 1, status: .new)]
        func describe(_ plan: BakePlan) -> [String] {
            plan.jobs.map { "\($0.family) \($0.source.key) \($0.tables) \($0.status.rawValue)" }
                + plan.listing.map { "\($0.family)/\($0.key) \($0.status.rawValue)" }
                + ["k4", "k35", "k9", "zz", "k", "a"].map { "\(String(describing: plan.status(family: "big", key: $0)))" }
        }
        let before = describe(plan)
        plan.compact()
        #expect(describe(plan) == before)
        #expect(plan.planned[0].files.map(\.key) == ["k1", "k4"], "two jobs of ten sources: their files alone")
        #expect(plan.planned[1].files.count == 2 && plan.planned[1] === busy, "one job of two sources: kept as it was")
        #expect(plan.sourceCount == 12 && plan.removedCount == 2)
        #expect(before.contains("0 k1 [0, 1] new") && before.contains("big/k35 removed") && before.contains("Optional(ImageBake.BakePlan.SourceStatus.changed)"))
    }
}

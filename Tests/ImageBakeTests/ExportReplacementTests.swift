import Foundation
import ImageBake
import ImageManifest
import ImageTableCore
import Synchronization
import TestSupport
import Testing

/// An export replaces its directory whole, and readers can tell that what they have open was
/// replaced, and open a set of tables that belong together.
@Suite struct ExportReplacementTests {
    /// Two projects with the same formats and different sources: their exports have the same
    /// file names and different keys.
    static func projects() throws -> (BakeProject, BakeProject) {
        let formats = BakeProject.fourStyles(size: 16, maximumCount: 10)
        let (a, b) = (try BakeProject(formats: formats), try BakeProject(formats: formats))
        for i in 0..<3 {
            try a.add("a\(i).jpg", from: Corpus.photo("Landscape_\(i)"))
            try b.add("b\(i).jpg", from: Corpus.photo("Portrait_\(i)"))
        }
        try b.add("b3.jpg", from: Corpus.photo("Portrait_3"))
        _ = try a.bake()
        _ = try b.bake()
        return (a, b)
    }

    static let names = ["bgra", "bgr", "rgb555", "grey"].map { "\($0).imagetable" }

    @Test func readersSeeThatTheExportWasReplacedAndReopenTheNewSet() throws {
        let (a, b) = try Self.projects()
        let out = a.root + "/out"
        _ = try TableExport.export(try a.manifest(), to: out, timestamp: 0, lockTimeout: 5)
        let readers = try ImageTableReader.openSet(paths: Self.names.map { out + "/" + $0 })
        #expect(readers.allSatisfy { !$0.isReplaced && $0.count == 3 })
        _ = try TableExport.export(try b.manifest(), to: out, timestamp: 0, lockTimeout: 5)
        #expect(readers.allSatisfy { $0.isReplaced })
        // The old files stay readable through the readers that have them open.
        #expect(try readers[0].withImage(forKey: "a0.jpg") { $0.width } == 16)
        let reopened = try readers.map { try $0.reopen() }
        #expect(reopened.allSatisfy { !$0.isReplaced && $0.count == 4 && $0.entry(forKey: "b3.jpg") != nil })
        // Nothing is left beside the directory: no staging directory, no old set.
        #expect(try FileManager.default.contentsOfDirectory(atPath: a.root).filter { $0.hasPrefix(".out.") }.isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out)) == Set(Self.names + ["index.json"]))
    }

    @Test func aBakeThatRebuildsATableReplacesIt() throws {
        let (a, _) = try Self.projects()
        let path = a.tables + "/grey.imagetable"
        let reader = try ImageTableReader(path: path)
        // Entries written in place do not replace the file.
        try a.add("a9.jpg", from: Corpus.photo("Landscape_3"))
        _ = try a.bake()
        #expect(!reader.isReplaced)
        #expect(reader.entry(forKey: "a9.jpg") != nil)
        try a.editManifest { $0.replacingOccurrences(of: "maximumCount: 10", with: "maximumCount: 11") }
        _ = try a.bake()
        #expect(reader.isReplaced)
        #expect(try reader.reopen().layout.capacity == 11)
        // A path that names nothing any more counts as replaced too.
        let rebuilt = try reader.reopen()
        try FileManager.default.removeItem(atPath: path)
        #expect(rebuilt.isReplaced)
        #expect(throws: ImageTableError.self) { try rebuilt.reopen() }
    }

    /// While one thread exports one project, then the other, again and again, into one
    /// directory, another opens the directory's tables as a set: every set it gets holds the
    /// keys of one project, never some tables of each.
    @Test func aSetOpenedDuringExportsIsAlwaysOneExport() throws {
        let (a, b) = try Self.projects()
        let out = a.root + "/out"
        let manifests = [try a.manifest(), try b.manifest()]
        _ = try TableExport.export(manifests[0], to: out, timestamp: 0, lockTimeout: 5)
        final class Finished: Sendable {
            let flag = Atomic(false)
            let exports = Atomic(0)
        }
        let finished = Finished()
        let exporter = Thread {
            for round in 1...16 where (try? TableExport.export(manifests[round % 2], to: out, timestamp: 0, lockTimeout: 5)) != nil {
                finished.exports.add(1, ordering: .relaxed)
            }
            finished.flag.store(true, ordering: .releasing)
        }
        exporter.start()
        let projectKeys: Set<Set<String>> = [["a0.jpg", "a1.jpg", "a2.jpg"], ["b0.jpg", "b1.jpg", "b2.jpg", "b3.jpg"]]
        var last = false
        var seen: Set<Set<String>> = []
        while !last {
            // One more set after the exports end, so that at least one is checked.
            last = finished.flag.load(ordering: .acquiring)
            guard let readers = try? ImageTableReader.openSet(paths: Self.names.map { out + "/" + $0 }, attempts: 100) else {
                #expect(!last, "the set could not be opened after the exports ended")
                continue
            }
            let keys = Set(readers.map { Set($0.entries().map(\.key)) })
            #expect(keys.count == 1 && projectKeys.contains(keys.first!), "a set mixes exports: \(keys)")
            seen.formUnion(keys)
        }
        // Every export happened, and the last one (project A's, round 16) is what a reader sees.
        #expect(finished.exports.load(ordering: .relaxed) == 16)
        #expect(seen.contains(projectKeys.first { $0.contains("a0.jpg") }!))
    }
}

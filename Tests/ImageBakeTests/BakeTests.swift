import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

struct BakeTests {
    /// One decode per source for the whole family, nothing decoded on an unchanged re-bake, a
    /// changed file re-baked, a removed file's entries kept (pruning is not the bake's job).
    @Test func decodesOncePerFamilyAndOnlyWhatChanged() throws {
        let project = try BakeProject()
        for (i, name) in ["Landscape_1", "Portrait_3", "Landscape_6", "Portrait_8"].enumerated() {
            try project.add("p\(i).jpg", from: Corpus.photo(name))
        }
        let first = try project.bake()
        #expect(first.sourcesFound == 4 && first.decoded == 4 && first.unchanged == 0 && first.failed.isEmpty)
        #expect(first.tables.map(\.written) == [4, 4, 4, 4])
        #expect(first.tables.allSatisfy { $0.entries == 4 })

        let second = try project.bake()
        #expect(second.decoded == 0 && second.unchanged == 4)
        #expect(second.tables.map(\.written) == [0, 0, 0, 0])

        try project.add("p2.jpg", from: Corpus.photo("Landscape_0"))
        try FileManager.default.removeItem(atPath: project.sources + "/p3.jpg")
        let third = try project.bake()
        #expect(third.decoded == 1 && third.unchanged == 2 && third.sourcesFound == 3)
        #expect(third.tables.map(\.written) == [1, 1, 1, 1])
        #expect(third.tables.allSatisfy { $0.entries == 4 }, "the removed source's entries stay until evicted")
        for table in third.tables {
            #expect(TableVerifier.verify(path: project.root + "/" + table.path.split(separator: "/").suffix(2).joined(separator: "/")).isValid)
        }
    }

    @Test func badSourcesAreReportedAndTheOthersBaked() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 20))
        let good = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1")))
        try project.add("good.jpg", from: Corpus.photo("Landscape_1"))
        project.add("truncated.jpg", bytes: Array(good.prefix(good.count / 3)))
        project.add("empty.jpg", bytes: [])
        project.add("notes.jpg", bytes: Array("this is not an image\n".utf8))
        project.add("big.png", bytes: Self.pngHeader(width: 5000, height: 5000))
        let summary = try project.bake { $0.decoding.maxPixels = 3_000_000 }
        #expect(summary.decoded == 1)
        let codes = Dictionary(uniqueKeysWithValues: summary.failed.map { ($0.key, $0.error.code) })
        #expect(codes == ["truncated.jpg": .truncated, "empty.jpg": .empty, "big.png": .tooManyPixels], "\(summary.failed)")
        // A file that is not an image by its first bytes is skipped with a warning, not failed.
        #expect(summary.skipped.map(\.key) == ["notes.jpg"] && summary.skipped.first?.error.code == .notAnImage)
        #expect(summary.failed.allSatisfy { $0.path.hasPrefix(project.sources) && !$0.error.message.isEmpty })
        #expect(summary.tables.allSatisfy { $0.entries == 1 })
    }

    /// A PNG that declares `width × height` but holds almost nothing: a decompression bomb's
    /// header, which must be refused before any decoding.
    static func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            let crc = body.withUnsafeBytes { CRC32.checksum($0) }
            return withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + body + withUnsafeBytes(of: crc.bigEndian, Array.init)
        }
        let ihdr = withUnsafeBytes(of: width.bigEndian, Array.init) + withUnsafeBytes(of: height.bigEndian, Array.init) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00]) + chunk("IEND", [])
    }

    @Test func everyPngSuiteImageBakesOrFailsCleanly() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 200))
        let names = try FileManager.default.contentsOfDirectory(atPath: Corpus.pngSuiteDirectory).filter { $0.hasSuffix(".png") }
        for name in names { try project.add(name, from: Corpus.pngSuiteDirectory + "/" + name) }
        let summary = try project.bake()
        let failed = Set(summary.failed.map(\.key)), skipped = Set(summary.skipped.map(\.key))
        #expect(failed.union(skipped) == Set(names.filter { $0.hasPrefix("x") }), "only the deliberately corrupt x* files fail")
        // Those whose PNG signature itself is damaged are not images by their first bytes: skipped.
        #expect(skipped == Set(names.filter { ["xs", "xcr", "xlf"].contains(where: $0.hasPrefix) }), "\(skipped.sorted())")
        #expect(summary.skipped.allSatisfy { $0.error.code == .notAnImage })
        #expect(summary.decoded == names.count - failed.count - skipped.count)
        #expect(summary.failed.allSatisfy { $0.error.code != .workerCrashed && $0.error.code != .protocolError })
    }

    @Test func strictStopsAndCommitsNothingForTheFailedSource() throws {
        let project = try BakeProject()
        project.add("a-broken.jpg", bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10])
        try project.add("b-good.jpg", from: Corpus.photo("Landscape_1"))
        let error = #expect(throws: ImageTableError.self) { try project.bake(jobs: 1) { $0.strict = true } }
        #expect(error?.code == .sourceFailed && error?.message.contains("a-broken.jpg") == true)
        let table = try ImageTableReader(path: project.tables + "/bgra.imagetable")
        #expect(table.entry(forKey: "a-broken.jpg") == nil)
    }

    @Test func dryRunTouchesNoTable() throws {
        let project = try BakeProject()
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let plan = try project.bake { $0.dryRun = true }
        #expect(plan.dryRun && plan.decoded == 1 && plan.tables.allSatisfy { $0.entries == 1 })
        #expect(!FileManager.default.fileExists(atPath: project.tables))
        _ = try project.bake()
        let again = try project.bake { $0.dryRun = true }
        #expect(again.decoded == 0 && again.unchanged == 1)
    }

    /// More sources than slots: the most recently modified get the slots, the rest are left out
    /// (reported, not failed), and nothing churns: the next bake decodes nothing.
    @Test func aFamilyLargerThanItsTablesIsLeftOutNotChurned() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 3))
        for i in 0..<7 {
            try project.add("p\(i).jpg", from: Corpus.photo(i % 2 == 0 ? "Landscape_\(i)" : "Portrait_\(i)"))
            project.setModified("p\(i).jpg", secondsAgo: 100 - i)
        }
        let summary = try project.bake()
        #expect(summary.decoded == 3 && summary.leftOut == 4 && summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.tables.allSatisfy { $0.written == 3 && $0.evicted == 0 && $0.entries == 3 && $0.leftOut == 4 })
        #expect(summary.warnings.count == 4 && summary.warnings.allSatisfy { $0.description.contains("has 7 sources but format") })
        let table = try ImageTableReader(path: project.tables + "/bgra.imagetable")
        #expect(Set(table.entries().map(\.key)) == ["p4.jpg", "p5.jpg", "p6.jpg"], "the three most recently modified")
        let again = try project.bake()
        #expect(again.decoded == 0 && again.unchanged == 3 && again.leftOut == 4)
        #expect(again.tables.allSatisfy { $0.written == 0 && $0.evicted == 0 })
    }

    /// A full table evicts only for a source that decoded: a bad one costs no entry its place.
    /// The full table's member is rendered into the worker's own buffer and placed afterwards;
    /// its pixels must equal those rendered straight into a slot.
    @Test func aBadSourceNeverEvictsAndHeldRendersMatchDirectOnes() throws {
        let full = try BakeProject(formats: BakeProject.fourStyles(size: 24, maximumCount: 2))
        try full.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try full.add("b.jpg", from: Corpus.photo("Portrait_2"))
        _ = try full.bake()
        let good = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_3")))
        full.add("c-truncated.jpg", bytes: Array(good.prefix(good.count / 2)))
        let failing = try full.bake()
        #expect(failing.failed.map(\.key) == ["c-truncated.jpg"])
        #expect(failing.tables.allSatisfy { $0.evicted == 0 && $0.entries == 2 }, "\(failing.tables)")

        try FileManager.default.removeItem(atPath: full.sources + "/c-truncated.jpg")
        try full.add("d.jpg", from: Corpus.photo("Landscape_3"))
        let evicting = try full.bake()
        #expect(evicting.decoded == 1 && evicting.tables.allSatisfy { $0.evicted == 1 && $0.entries == 2 })

        let roomy = try BakeProject(formats: BakeProject.fourStyles(size: 24, maximumCount: 10))
        try roomy.add("d.jpg", from: Corpus.photo("Landscape_3"))
        _ = try roomy.bake()
        for name in ["bgra", "bgr", "rgb555", "grey"] {
            func pixels(_ project: BakeProject) throws -> [UInt8]? {
                try ImageTableReader(path: project.tables + "/\(name).imagetable").withImage(forKey: "d.jpg") { Array($0.bytes) }
            }
            let held = try pixels(full), direct = try pixels(roomy)
            #expect(held != nil && held == direct, "\(name)")
        }
        #expect(TableVerifier.verify(path: full.tables + "/bgra.imagetable").isValid)
    }

    /// Many sources through every job slot: a crash in the decoder stack (the liborc race of
    /// docs/PIPELINE.md, should it come back) would surface as worker-crashed failures.
    @Test func manySourcesWithAllJobs() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 20, maximumCount: 400))
        let photos = (0...8).flatMap { ["Landscape_\($0)", "Portrait_\($0)"] }
        for i in 0..<240 { try project.add("s\(i).jpg", from: Corpus.photo(photos[i % photos.count])) }
        let summary = try project.bake(jobs: ProcessInfo.processInfo.activeProcessorCount + 1)
        #expect(summary.failed.isEmpty, "\(summary.failed.prefix(3))")
        #expect(summary.decoded == 240 && summary.tables.allSatisfy { $0.entries == 240 })
    }
}

import Foundation
import ImageTableCore
import Testing

/// `imagetable bake` as a user runs it: exit codes, summaries and JSON.
struct BakeCLITests {
    @Test func exitCodesZeroThreeAndOne() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("good.jpg", from: Corpus.photo("Portrait_1"))
        let ok = try runCLI(["bake", project.manifestPath, "--jobs", "1"])
        #expect(ok.status == 0, "\(ok.err)")
        #expect(ok.out.contains("1 decoded, 0 unchanged, 0 failed"))

        project.add("bad.png", bytes: [0x89, 0x50, 0x4E, 0x47])
        let partial = try runCLI(["bake", project.manifestPath])
        #expect(partial.status == 3)
        #expect(partial.err.contains("\(project.sources)/bad.png: error:"))
        #expect(partial.out.contains("0 decoded, 1 unchanged, 1 failed"))

        let strict = try runCLI(["bake", project.manifestPath, "--strict"])
        #expect(strict.status == 1 && strict.err.contains("--strict"))

        try "version: 1\noutput: t\nfamilies: {}\nbogus: 1\n".write(toFile: project.manifestPath, atomically: true, encoding: .utf8)
        let invalid = try runCLI(["bake", project.manifestPath])
        #expect(invalid.status == 1 && invalid.out.contains("manifest.yaml:4:1: error:"))

        #expect(try runCLI(["bake"]).status == 64)
        #expect(try runCLI(["bake", project.manifestPath, "--jobs", "0"]).status == 64)
    }

    @Test func jsonSummaryParses() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 16, maximumCount: 10))
        try project.add("good.jpg", from: Corpus.photo("Portrait_1"))
        project.add("empty.jpg", bytes: [])
        let run = try runCLI(["bake", project.manifestPath, "--format", "json"])
        #expect(run.status == 3)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources == ["found": 2, "decoded": 1, "unchanged": 0, "failed": 1])
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.first?["key"] as? String == "empty.jpg" && failures.first?["code"] as? String == "empty")
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.count == 4 && tables.allSatisfy { $0["written"] as? Int == 1 })
    }

    /// The disk fills up (here: a file size limit) in the middle of a bake: a clean fatal error,
    /// and every entry that was committed still verifies.
    @Test func aFullDiskStopsTheBakeCleanly() throws {
        let project = try BakeProject(formats: "      big:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 50\n")
        for i in 0..<4 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        // Room for the header, the index and one slot and a half.
        let limit = 16384 + 98304 * 3 / 2
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--fsize=\(limit)", Products.imagetable, "bake", project.manifestPath, "--jobs", "1"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 1, "\(message)")
        #expect(message.contains("free some disk space"), "\(message)")
        let report = TableVerifier.verify(path: project.tables + "/big.imagetable")
        #expect(report.isValid && report.validEntries == 1, "\(report.problems)")
    }

    @Test func aMissingSourcesDirectoryIsFatal() throws {
        let project = try BakeProject()
        try FileManager.default.removeItem(atPath: project.sources)
        let run = try runCLI(["bake", project.manifestPath])
        #expect(run.status == 1 && run.err.contains("sources-unreadable"))
    }
}

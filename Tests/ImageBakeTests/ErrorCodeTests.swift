import Foundation
import ImageTableCore
import TestSupport
import Testing
import WorkerProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One error shape from the core to the JSON output: the code that stopped a bake is the code
/// of what happened, never a guess from a message or a catch-all.
@Suite struct ErrorCodeTests {
    /// The `fatal` object of `bake --format json`, and the exit status.
    private func fatal(_ arguments: [String], prefix: [String] = []) throws -> (status: Int32, fatal: [String: String]?) {
        let result: ProcessResult
        if prefix.isEmpty {
            result = try run(Products.imagetable, arguments)
        } else {
            result = try run(prefix[0], Array(prefix.dropFirst()) + [Products.imagetable] + arguments)
        }
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result.status, json?["fatal"] as? [String: String])
    }

    /// A worker's failure code becomes the bake's error code unchanged, so each must be one.
    @Test func everyWorkerFailureCodeIsAnErrorCode() {
        for code in WorkerFailure.Code.allCases {
            #expect(ImageTableError.Code(rawValue: code.rawValue) != nil, "\(code.rawValue)")
        }
    }

    @Test func aLockedTableIsReportedAsLocked() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try FileManager.default.createDirectory(atPath: project.tables, withIntermediateDirectories: true)
        let holder = try ImageTableWriter(path: project.tables + "/bgra.imagetable", format: try project.manifest().formats[0])
        defer { holder.close() }
        let (status, fatal) = try fatal(["bake", project.manifestPath, "--format", "json", "--lock-timeout", "0"])
        #expect(status == 1)
        #expect(fatal?["code"] == "locked", "\(String(describing: fatal))")
        #expect(fatal?["path"]?.hasSuffix("tables/bgra.imagetable") == true)
    }

    @Test func aFullDiskIsReportedAsNoSpace() throws {
        let project = try BakeProject(formats: "      big:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 50\n")
        for i in 0..<3 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        let (status, fatal) = try fatal(["bake", project.manifestPath, "--jobs", "1", "--format", "json"],
                                        prefix: ["/usr/bin/prlimit", "--fsize=\(16384 + 98304 * 3 / 2)"])
        #expect(status == 1)
        #expect(fatal?["code"] == "no-space", "\(String(describing: fatal))")
    }

    /// A directory the scan cannot list. Root lists every directory whatever its mode, so as
    /// root the dry run runs as `nobody` (through `setpriv`).
    @Test func anUnreadableDirectoryIsUnreadableNotAKeyProblem() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("ok.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("closed/x.jpg", from: Corpus.photo("Landscape_2"))
        chmod(project.sources + "/closed", 0)
        defer { chmod(project.sources + "/closed", 0o755) }
        var prefix: [String] = []
        if geteuid() == 0 {
            prefix = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            for path in [project.root, project.sources] { chmod(path, 0o755) }
            chmod(project.manifestPath, 0o644)
            chmod(project.sources + "/ok.jpg", 0o644)
        }
        let arguments = ["bake", project.manifestPath, "--dry-run", "--format", "json"]
        let result = prefix.isEmpty ? try run(Products.imagetable, arguments)
            : try run(prefix[0], Array(prefix.dropFirst()) + [Products.imagetable] + arguments)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.map { $0["code"] as? String } == ["unreadable"], "\(failures)")
        #expect(failures.first?["key"] as? String == "closed")
    }
}

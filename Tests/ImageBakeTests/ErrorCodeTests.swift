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
        #expect(fatal?["message"]?.contains("; did not wait (lock timeout 0). Wait for it") == true, "\(String(describing: fatal))")
        // The time spent waiting is the bake's: `seconds` was 0 in the document of a stopped bake.
        let waited = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json", "--lock-timeout", "0.3"])
        let document = try JSONSerialization.jsonObject(with: Data(waited.stdout.utf8)) as? [String: Any]
        #expect(waited.status == 1 && (document?["seconds"] as? Double ?? 0) >= 0.3, "\(waited.stdout)")
    }

    @Test func aFullDiskIsReportedAsNoSpace() throws {
        let project = try BakeProject(formats: "      big:\n        size: 150x150\n        style: 32BitBGRA\n        maximumCount: 50\n")
        for i in 0..<3 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i)")) }
        let (status, fatal) = try fatal(["bake", project.manifestPath, "--jobs", "1", "--format", "json"],
                                        prefix: ["/usr/bin/prlimit", "--fsize=\(16384 + 98304 * 3 / 2)"])
        #expect(status == 1)
        #expect(fatal?["code"] == "no-space", "\(String(describing: fatal))")
    }

    /// Whether this process may mount a tmpfs in a mount namespace of its own (root, and a
    /// container that allows it).
    static let canMountTmpfs: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
              let result = try? run("/usr/bin/unshare", ["-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && exec true"])
        else { return false }
        return result.status == 0
    }()

    /// On tmpfs, reading a hole of a mapped file allocates memory, so once the tmpfs is full a
    /// probe of the hash index that reaches a page no bucket was stored in was SIGBUS: a bake
    /// into a full tmpfs crashed instead of failing cleanly (`make soak` found it). The writer now
    /// allocates the active index area where holes fault, and the bake fails with `no-space`.
    /// Here the tmpfs fills up once the bake has planned, before its first reservation probes
    /// the index for a key it never held.
    @Test(.enabled(if: Self.canMountTmpfs))
    func aFullTmpfsIsNoSpaceNotABusError() throws {
        let project = try BakeProject(formats: "      grey:\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 100000\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        try FileManager.default.createDirectory(atPath: project.tables, withIntermediateDirectories: true)
        let hook = project.root + "/fill-at-planned.sh"
        try "#!/bin/sh\n[ \"$1\" = planned ] && dd if=/dev/zero of=\"\(project.tables)/filler\" bs=4k 2>/dev/null\nexit 0\n"
            .write(toFile: hook, atomically: true, encoding: .utf8)
        chmod(hook, 0o755)
        // One namespace for the whole story, since its tmpfs goes with it.
        let script = """
            mount -t tmpfs -o size=4M tmpfs "$1" || exit 90
            IMAGETABLE_TEST_HOOK="$3" "$0" bake "$2" --jobs 1 --format json > "$4/bake.json"
            echo $? > "$4/bake.status"
            """
        let result = try run("/usr/bin/unshare", ["-m", "sh", "-c", script, Products.imagetable, project.tables, project.manifestPath,
                                                  hook, project.root])
        #expect(result.status == 0, "\(result.stderr)")
        let status = try String(contentsOfFile: project.root + "/bake.status", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let output = try String(contentsOfFile: project.root + "/bake.json", encoding: .utf8)
        let fatal = (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])?["fatal"] as? [String: String]
        #expect(status == "1", "the bake exited \(status) (135 is SIGBUS): \(result.stderr)")
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

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

    /// Runs `imagetable ARGUMENTS` as `nobody` when the tests run as root (root lists every
    /// directory whatever its mode), with the project handed to it.
    private func runAsNobody(_ arguments: [String], project: BakeProject) throws -> ProcessResult {
        guard geteuid() == 0 else { return try run(Products.imagetable, arguments) }
        let paths = [project.root] + (FileManager.default.enumerator(atPath: project.root)?.compactMap { $0 as? String }.map { project.root + "/" + $0 } ?? [])
        for path in paths { _ = lchown(path, 65534, 65534) }
        return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable] + arguments)
    }

    /// A directory the scan cannot list hides its files; it does not delete them: their entries
    /// are kept, not counted removed, not pruned and not evicted (a cron job's `bake --prune`
    /// deleted them all when a directory's mode changed). A sources directory that cannot be
    /// listed at all stops the bake, as a missing one does.
    /// Mode 0 cannot be listed; mode 0644 can be, but none of its names looked at (no search
    /// permission), which dropped them silently (a review found a `chmod 644` wiping them).
    @Test(arguments: [mode_t(0), 0o644])
    func entriesBelowAnUnlistedDirectoryAreKept(mode: mode_t) throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("ok.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("closed/x.jpg", from: Corpus.photo("Landscape_2"))
        try project.add("closed/y.jpg", from: Corpus.photo("Landscape_3"))
        #expect(try runAsNobody(["bake", project.manifestPath], project: project).status == 0)
        chmod(project.sources + "/closed", mode)
        defer { chmod(project.sources + "/closed", 0o755) }
        try project.add("new.jpg", from: Corpus.photo("Landscape_4"))
        let result = try runAsNobody(["bake", "--prune", project.manifestPath, "--format", "json"], project: project)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        #expect(result.status == 3, "one failure: the directory")
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["removed"] == 0 && sources["decoded"] == 1 && sources["failed"] == 1, "\(sources)")
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.allSatisfy { $0["entries"] as? Int == 4 && $0["pruned"] as? Int == 0 && $0["evicted"] as? Int == 0 }, "\(tables)")
        let keys = try ImageTableReader(path: project.tables + "/bgra.imagetable").entries().map(\.key).sorted()
        #expect(keys == ["closed/x.jpg", "closed/y.jpg", "new.jpg", "ok.jpg"])

        chmod(project.sources, mode)
        defer { chmod(project.sources, 0o755) }
        let root = try runAsNobody(["bake", "--prune", project.manifestPath, "--format", "json"], project: project)
        let fatal = (try JSONSerialization.jsonObject(with: Data(root.stdout.utf8)) as? [String: Any])?["fatal"] as? [String: Any]
        #expect(root.status == 1 && fatal?["code"] as? String == "sources-unreadable", "\(root.stdout)")
        #expect(try ImageTableReader(path: project.tables + "/bgra.imagetable").count == 4)

        // Listed again, its files are what the tables hold: nothing to decode.
        chmod(project.sources, 0o755)
        chmod(project.sources + "/closed", 0o755)
        let again = try runAsNobody(["bake", project.manifestPath, "--format", "json"], project: project)
        let settled = (try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["sources"] as? [String: Int]
        #expect(again.status == 0 && settled?["decoded"] == 0 && settled?["unchanged"] == 4, "\(again.stdout)")
    }

    /// The kept entries are only those the family's patterns still take: a key below an
    /// unlisted directory that the manifest now excludes is no source, and goes as any does.
    @Test func anExcludedKeyBelowAnUnlistedDirectoryIsNotKept() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("ok.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("closed/x.jpg", from: Corpus.photo("Landscape_2"))
        #expect(try runAsNobody(["bake", project.manifestPath], project: project).status == 0)
        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    exclude: \"closed/**\"\n") }
        chmod(project.sources + "/closed", 0)
        defer { chmod(project.sources + "/closed", 0o755) }
        let result = try runAsNobody(["bake", "--prune", project.manifestPath, "--format", "json"], project: project)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.allSatisfy { $0["entries"] as? Int == 1 && $0["pruned"] as? Int == 1 }, "\(tables)")
    }

    /// A selected link that cannot be followed is a file that cannot be read, not a deleted one:
    /// its entry is kept, not counted removed, not pruned (it was both failed and removed).
    @Test func aDanglingLinkKeepsItsEntry() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        try FileManager.default.removeItem(atPath: project.sources + "/b.jpg")
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/b.jpg", withDestinationPath: "missing.jpg")
        // `--list` says so too, on standard error (it was silent: the key has no line of its own).
        let list = try run(Products.imagetable, ["bake", "--list", project.manifestPath])
        #expect(list.stderr.contains("b.jpg: error: symbolic link cannot be followed"), "\(list.stderr)")
        let result = try run(Products.imagetable, ["bake", "--prune", project.manifestPath, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(result.status == 3 && sources["removed"] == 0 && sources["failed"] == 1, "\(sources)")
        let tables = try #require(json["tables"] as? [[String: Any]])
        #expect(tables.allSatisfy { $0["entries"] as? Int == 2 && $0["pruned"] as? Int == 0 }, "\(tables)")
        try FileManager.default.removeItem(atPath: project.sources + "/b.jpg")
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        let back = try run(Products.imagetable, ["bake", project.manifestPath, "--format", "json"])
        let settled = (try JSONSerialization.jsonObject(with: Data(back.stdout.utf8)) as? [String: Any])?["sources"] as? [String: Int]
        #expect(back.status == 0 && settled?["decoded"] == 0, "\(back.stdout)")
    }

    /// A bake state this process may not write (restored with another owner) is read, and the
    /// bake goes on without remembering, with a warning: it stopped before any table, exit 1,
    /// though the state is a cache.
    @Test func aStateThatCannotBeWrittenIsAWarning() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 4))
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try runAsNobody(["bake", project.manifestPath], project: project).status == 0)
        let state = project.tables + "/.imagetable-state.sqlite"
        if geteuid() == 0 {
            // Handed back to root after the first bake: `nobody` may read it, not write it.
            #expect(lchown(state, 0, 0) == 0 && chmod(state, 0o644) == 0)
        } else {
            #expect(chmod(state, 0o444) == 0)
        }
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        let arguments = ["bake", project.manifestPath, "--format", "json"]
        let result = geteuid() == 0
            ? try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable] + arguments)
            : try run(Products.imagetable, arguments)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        #expect(result.status == 0, "\(json)")
        let warnings = json["warnings"] as? [String] ?? []
        #expect(warnings.count == 1 && warnings[0].contains("the bake state cannot be written") && warnings[0].hasSuffix("[state-read-only]"),
                "\(warnings)")
        #expect((json["sources"] as? [String: Int])?["decoded"] == 1)
        #expect(try ImageTableReader(path: project.tables + "/bgra.imagetable").count == 2)
        // Read without leaving anything: a -shm made with the state's read-only mode kept it
        // read-only after it was made writable again.
        let left = try FileManager.default.contentsOfDirectory(atPath: project.tables).filter { $0.hasPrefix(".imagetable-state") }
        #expect(left == [".imagetable-state.sqlite"], "\(left)")
        if geteuid() == 0 { #expect(lchown(state, 65534, 65534) == 0) } else { #expect(chmod(state, 0o644) == 0) }
        let writable = geteuid() == 0
            ? try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable] + arguments)
            : try run(Products.imagetable, arguments)
        #expect(writable.status == 0 && !writable.stdout.contains("state-read-only"), "\(writable.stdout)")

        // An output directory this process may not write, its state and tables writable: the
        // bake, a dry run and a listing go on (each failed reading the state).
        if geteuid() == 0 { #expect(lchown(project.tables, 0, 0) == 0) } else { #expect(chmod(project.tables, 0o555) == 0) }
        defer { chmod(project.tables, 0o755) }
        for extra in [[], ["--dry-run"], ["--list"]] {
            let arguments = ["bake", project.manifestPath, "--no-progress"] + extra
            let run = geteuid() == 0
                ? try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable] + arguments)
                : try run(Products.imagetable, arguments)
            #expect(run.status == 0, "\(extra): \(run.stderr)")
        }
    }
}

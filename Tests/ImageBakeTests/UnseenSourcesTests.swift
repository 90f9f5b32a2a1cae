import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a bake does with what it cannot see: a directory it cannot list or search, a link it
/// cannot follow, a bake state it may not write. Hidden is not deleted, and a cache it may not
/// write does not stop it. As root, the bakes run as `nobody` (root reads whatever the modes).
@Suite struct UnseenSourcesTests {
    /// Runs `imagetable ARGUMENTS` as `nobody` when the tests run as root (root lists every
    /// directory whatever its mode), with the project handed to it.
    /// With `keepingOwners`, files keep the owners they have.
    private func runAsNobody(_ arguments: [String], project: BakeProject, keepingOwners: Bool = false) throws -> ProcessResult {
        guard geteuid() == 0 else { return try run(Products.imagetable, arguments) }
        let paths = [project.root] + (FileManager.default.enumerator(atPath: project.root)?.compactMap { $0 as? String }.map { project.root + "/" + $0 } ?? [])
        if !keepingOwners { for path in paths { _ = lchown(path, 65534, 65534) } }
        return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable] + arguments)
    }

    /// A sources directory that is there but empty (an NFS mount that is not mounted) lists no
    /// file: `bake --prune` deleted every entry, exit 0, under a warning that the tables "stay
    /// empty". A family that lists no source prunes nothing and says so (`prune-withheld`); one
    /// source listed is enough for `--prune` to go on.
    @Test func anEmptySourcesDirectoryPrunesNothing() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        try FileManager.default.moveItem(atPath: project.sources, toPath: project.root + "/away")
        try FileManager.default.createDirectory(atPath: project.sources, withIntermediateDirectories: false)
        let pruned = try run(Products.imagetable, ["bake", "--prune", "manifest.yaml"], in: project.root)
        #expect(pruned.status == 0 && pruned.stdout.contains("tables/thumb.imagetable        0        0       0      2/4\n"), "\(pruned.stdout)")
        #expect(pruned.stderr.contains("manifest.yaml:5:14: warning: family 'photos' lists no source in 'src', so --prune deleted none of "
                                       + "the 2 entries of its tables: an unmounted or emptied sources directory would have emptied them; "
                                       + "to empty them on purpose, delete tables/thumb.imagetable [prune-withheld]\n"), "\(pruned.stderr)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key).sorted() == ["a.jpg", "b.jpg"])
        // A file that is no image is no source: a placeholder left in the mount point withholds too.
        project.add("placeholder.jpg", bytes: Array("not mounted".utf8))
        let placeholder = try run(Products.imagetable, ["bake", "--prune", "manifest.yaml"], in: project.root)
        #expect(placeholder.stderr.contains("[prune-withheld]") && placeholder.stdout.contains("      2/4\n"), "\(placeholder.stdout)\(placeholder.stderr)")
        try FileManager.default.removeItem(atPath: project.sources + "/placeholder.jpg")
        // One of the two back: the other's entry is pruned as usual.
        try FileManager.default.moveItem(atPath: project.root + "/away/a.jpg", toPath: project.sources + "/a.jpg")
        let one = try run(Products.imagetable, ["bake", "--prune", "manifest.yaml"], in: project.root)
        #expect(one.status == 0 && !one.stderr.contains("prune-withheld"), "\(one.stderr)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key) == ["a.jpg"])
    }

    /// A shard that holds none of a family's sources, in a directory that holds other shards',
    /// prunes its deleted sources as usual: the rule above kept a shard's last deleted source
    /// for ever, and the merge shipped it.
    @Test func aShardWithNoSourceLeftPrunesItsLastOne() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        let keys = (0..<40).map { "p\($0).jpg" }
        let lone = try #require(keys.first { KeyShard.shard(of: $0, count: 2) == 0 })
        let other = try #require(keys.first { KeyShard.shard(of: $0, count: 2) == 1 })
        try project.add(lone, from: Corpus.photo("Landscape_1"))
        try project.add(other, from: Corpus.photo("Landscape_2"))
        #expect(try run(Products.imagetable, ["bake", "manifest.yaml", "--shard", "0/2", "--output", "s0"], in: project.root).status == 0)
        try FileManager.default.removeItem(atPath: project.sources + "/" + lone)
        let pruned = try run(Products.imagetable, ["bake", "manifest.yaml", "--shard", "0/2", "--output", "s0", "--prune"], in: project.root)
        #expect(pruned.status == 0 && !pruned.stderr.contains("prune-withheld"), "\(pruned.stderr)")
        #expect(try ImageTableReader(path: project.root + "/s0/thumb.imagetable").entries().isEmpty)
    }

    /// A directory the family's patterns cannot reach is no loss when it cannot be listed:
    /// `d2/` under `include: d1/*.jpg`, and a hidden `.snapshot/` under the default patterns,
    /// failed the bake (exit 3, every night of a cron job) though nothing there could be taken.
    @Test func aDirectoryThePatternsCannotReachIsNotReported() throws {
        // d1 and d2 of photos, and a hidden .snapshot, the last two unreadable.
        func project(include: String?) throws -> BakeProject {
            let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n", include: include)
            try project.add("d1/a.jpg", from: Corpus.photo("Landscape_1"))
            try project.add("d2/b.jpg", from: Corpus.photo("Landscape_2"))
            try project.add(".snapshot/c.jpg", from: Corpus.photo("Landscape_3"))
            for dir in ["d2", ".snapshot"] { chmod(project.sources + "/" + dir, 0) }
            return project
        }
        let narrowProject = try project(include: "d1/*.jpg"), wide = try project(include: nil)
        defer { for p in [narrowProject, wide] { for dir in ["d2", ".snapshot"] { chmod(p.sources + "/" + dir, 0o755) } } }
        let narrow = try runAsNobody(["bake", narrowProject.manifestPath], project: narrowProject)
        #expect(narrow.status == 0 && !narrow.stderr.contains("unreadable"), "\(narrow.stderr)")
        // Under patterns that reach d2, it is reported as before.
        let reached = try runAsNobody(["bake", wide.manifestPath], project: wide)
        #expect(reached.status == 3 && reached.stderr.contains("d2: error: directory cannot be listed"), "\(reached.stderr)")
        #expect(!reached.stderr.contains(".snapshot"), "\(reached.stderr)")
    }

    /// A directory moved out of the sources and linked back in (a disk filled up, its photos
    /// moved to another): the scan skipped the link without a word, and `bake --prune` deleted
    /// its entries, exit 0. A link leading outside keeps them, as an unreadable directory does,
    /// until `--allow-outside-paths` follows it; then they are what the tables hold already.
    @Test func aDirectoryLinkedBackInIsNotPruned() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("top.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("photos/a.jpg", from: Corpus.photo("Landscape_2"))
        #expect(try run(Products.imagetable, ["bake", "manifest.yaml"], in: project.root).status == 0)
        try FileManager.default.moveItem(atPath: project.sources + "/photos", toPath: project.root + "/store")
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/photos", withDestinationPath: "../store")
        let pruned = try run(Products.imagetable, ["bake", "--prune", "manifest.yaml", "--format", "json"], in: project.root)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(pruned.stdout.utf8)) as? [String: Any], "\(pruned.stderr)")
        #expect(pruned.status == 3, "one failure: the link")
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["removed"] == 0 && sources["failed"] == 1, "\(sources)")
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.map { $0["code"] as? String } == ["outside-sources"] && failures.first?["key"] as? String == "photos", "\(failures)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key).sorted() == ["photos/a.jpg", "top.jpg"])
        let followed = try run(Products.imagetable, ["bake", "--prune", "--allow-outside-paths", "manifest.yaml", "--format", "json"], in: project.root)
        let settled = (try JSONSerialization.jsonObject(with: Data(followed.stdout.utf8)) as? [String: Any])?["sources"] as? [String: Int]
        #expect(followed.status == 0 && settled?["decoded"] == 0 && settled?["removed"] == 0 && settled?["unchanged"] == 2,
                "\(followed.stdout)\(followed.stderr)")
        // The disk it lies on not mounted: the link leads nowhere, and its entries stay (a review
        // found them pruned, exit 0, without a word).
        try FileManager.default.moveItem(atPath: project.root + "/store", toPath: project.root + "/unmounted")
        let dangling = try run(Products.imagetable, ["bake", "--prune", "--allow-outside-paths", "manifest.yaml"], in: project.root)
        #expect(dangling.status == 0 && dangling.stderr.contains("photos: warning: symbolic link cannot be followed (No such file or directory); "
                                                                + "if it led to a directory, its files' entries are kept as they are [not-a-regular-file]"),
                "\(dangling.stderr)")
        #expect(try ImageTableReader(path: project.tables + "/thumb.imagetable").entries().map(\.key).sorted() == ["photos/a.jpg", "top.jpg"])
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
        // With the system's reason.
        let failures = try #require(json["failures"] as? [[String: Any]])
        #expect(failures.map { $0["message"] as? String } == [(mode == 0 ? "directory cannot be listed" : "directory cannot be searched")
                                                               + " (Permission denied); its files' entries are kept as they are"], "\(failures)")
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

    /// Tables another user owns (a cron job run as another user than the one who restored
    /// them): a bake with nothing to write failed "open lock file failed: Permission denied" on
    /// the table; it succeeds as on a read-only mount, naming the file and its owner, and one
    /// with work to do says what it would write.
    @Test func tablesThisUserMayNotWriteAreReadOnly() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try runAsNobody(["bake", project.manifestPath], project: project).status == 0)
        let table = project.tables + "/thumb.imagetable"
        for path in [table, table + ".lock"] {
            if geteuid() == 0 { #expect(lchown(path, 0, 0) == 0) } else { #expect(chmod(path, 0o444) == 0) }
        }
        let owner = geteuid() == 0 ? 0 : geteuid()
        let user = geteuid() == 0 ? 65534 : geteuid()
        let mode = geteuid() == 0 ? "0644" : "0444"
        let unchanged = try runAsNobody(["bake", project.manifestPath], project: project, keepingOwners: true)
        #expect(unchanged.status == 0 && unchanged.stderr == "\(project.tables): warning: \(project.tables)/thumb.imagetable may not be "
                + "written by this user (uid \(user); the file is uid \(owner)'s, mode \(mode)); every table is up to date, so nothing "
                + "was written (the entries' times of use and the bake state were not refreshed) [output-read-only]\n", "\(unchanged.stderr)")
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        let work = try runAsNobody(["bake", project.manifestPath], project: project, keepingOwners: true)
        #expect(work.status == 1 && work.stderr.hasSuffix("and this bake would write: 1 source to decode (bake --dry-run lists them) "
                                                          + "[not-writable]\n"), "\(work.stderr)")
    }

    /// An output directory this user may not make is `not-writable`, as one that exists and may
    /// not be written is (it was `permission-denied`, so which code a CI rule saw depended on
    /// whether the directory was there).
    @Test func anOutputDirectoryThatCannotBeMadeIsNotWritable() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        let locked = project.root + "/locked"
        try FileManager.default.createDirectory(atPath: locked + "/exists", withIntermediateDirectories: true)
        for path in [project.root, project.sources, project.sources + "/a.jpg", project.manifestPath, locked + "/exists"] {
            _ = chmod(path, path.hasSuffix(".jpg") || path.hasSuffix(".yaml") ? 0o644 : 0o755)
        }
        // Its parent may not be written: by nobody (as root), nor by its owner (not as root).
        _ = chmod(locked, 0o555)
        defer { _ = chmod(locked, 0o755) }
        for output in ["locked/new", "locked/exists"] {
            let result = geteuid() == 0
                ? try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Products.imagetable, "bake",
                                               project.manifestPath, "--output", project.root + "/" + output, "--format", "json"])
                : try run(Products.imagetable, ["bake", project.manifestPath, "--output", project.root + "/" + output, "--format", "json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
            #expect(result.status == 1 && (document["fatal"] as? [String: Any])?["code"] as? String == "not-writable", "\(output): \(document)")
        }
    }

    /// An output directory this user may not write, its tables and lock files its own: `--prune`
    /// of a table no format names failed to delete it and said nothing, exit 0, or said another
    /// process was writing it (its lock file could not be made).
    @Test func anOrphanThatCannotBeDeletedIsSaid() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try runAsNobody(["bake", project.manifestPath], project: project).status == 0)
        try FileManager.default.copyItem(atPath: project.tables + "/thumb.imagetable", toPath: project.tables + "/old.imagetable")
        if geteuid() == 0 { _ = lchown(project.tables + "/old.imagetable", 65534, 65534); #expect(lchown(project.tables, 0, 0) == 0) }
        #expect(chmod(project.tables, 0o555) == 0)
        defer { chmod(project.tables, 0o755) }
        let result = try runAsNobody(["bake", project.manifestPath, "--prune"], project: project, keepingOwners: true)
        #expect(result.status == 0 && result.stderr.contains("\(project.tables)/old.imagetable: warning: no format of the manifest names this "
                                                             + "table, and --prune could not delete it: open lock file failed: Permission denied"),
                "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: project.tables + "/old.imagetable"))
    }

    /// A bake state that cannot be opened for writing since its WAL files cannot grow (a full
    /// disk; here a file size limit, which the tables' writes report as `no-space` too) stopped
    /// a bake with nothing to write, exit 1 (`io` under `ulimit -f`): it is read, and the bake
    /// goes on without remembering, as for a state it may not write.
    @Test func aStateThatCannotGrowIsAWarning() throws {
        let project = try BakeProject(formats: "      thumb: {size: 8x8, style: 32BitBGRA, maximumCount: 4}\n")
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        let limited = try run("/bin/bash", ["-c", "ulimit -f 16; exec \"$0\" bake manifest.yaml", Products.imagetable], in: project.root)
        #expect(limited.status == 0 && limited.stdout.contains("0 decoded, 1 unchanged, 0 failed"), "\(limited.stdout)\(limited.stderr)")
        #expect(limited.stderr.hasPrefix("tables/.imagetable-state.sqlite: warning: the bake state cannot be written (SQLite: ")
                && limited.stderr.hasSuffix("[state-read-only]\n"), "\(limited.stderr)")
        let after = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(after.status == 0 && after.stderr.isEmpty, "\(after.stderr)")
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
        let warnings = warningLines(json) ?? []
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

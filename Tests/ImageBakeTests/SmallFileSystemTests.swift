import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A file system of its own, mounted for one test and unmounted after: a small ext4 image on a
/// loop device, or a small tmpfs. Only root may mount: the tests that need one are skipped
/// elsewhere (CI runs as root); where root cannot mount (no loop device), ``mount(_:megabytes:inodes:)``
/// gives `nil` and they return without checking anything.
final class ScratchMount {
    let directory: TemporaryDirectory
    let path: String

    enum Kind { case ext4, tmpfs }

    /// Whether this process may mount: the tests that need a mount are enabled by it.
    static var mayMount: Bool { getuid() == 0 }

    private init(directory: TemporaryDirectory, path: String) {
        self.directory = directory
        self.path = path
    }

    static func mount(_ kind: Kind, megabytes: Int, inodes: Int? = nil) throws -> ScratchMount? {
        guard getuid() == 0 else { return nil }
        let directory = try TemporaryDirectory()
        let path = directory.file("mnt")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        switch kind {
        case .ext4:
            let image = directory.file("fs.img")
            guard FileManager.default.isExecutableFile(atPath: "/sbin/mkfs.ext4") || FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.ext4"),
                  try run("/usr/bin/env", ["truncate", "-s", "\(megabytes)M", image]).status == 0,
                  try run("/usr/bin/env", ["PATH=/usr/sbin:/sbin:/usr/bin:/bin", "mkfs.ext4", "-q", "-m", "0"]
                          + (inodes.map { ["-N", "\($0)"] } ?? []) + [image]).status == 0,
                  try run("/usr/bin/env", ["mount", "-o", "loop", image, path]).status == 0 else { return nil }
        case .tmpfs:
            guard try run("/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]).status == 0 else { return nil }
        }
        return ScratchMount(directory: directory, path: path)
    }

    /// Fills what is left of the file system with one file.
    func fill() throws {
        _ = try run("/usr/bin/env", ["dd", "if=/dev/zero", "of=\(path)/fill", "bs=1M"])
    }

    /// Remounts the file system read-only, or writable again.
    func remount(readOnly: Bool) throws {
        let result = try run("/usr/bin/env", ["mount", "-o", "remount,\(readOnly ? "ro" : "rw")", path])
        #expect(result.status == 0, "remount: \(result.stderr)")
    }

    deinit {
        _ = try? run("/usr/bin/env", ["umount", "-l", path])
    }
}

/// Full disks where they are real: small file systems mounted for the test (the other full-disk
/// tests use a file size limit, which fails at once and whole, where a disk fills part-way).
@Suite(.serialized, .enabled(if: ScratchMount.mayMount, "mounting needs root")) struct SmallFileSystemTests {
    /// ext4 keeps the blocks a failed `fallocate` got: the first table's reservation for the
    /// whole bake took all the space, the second table could not get one slot, and the bake
    /// stopped with nothing written, leaving the disk full. Now the reservation is given back,
    /// the bake writes what fits, and its report says how much.
    @Test func aBakeOnADiskThatFillsWritesWhatFitsAndSaysSo() throws {
        guard let disk = try ScratchMount.mount(.ext4, megabytes: 24) else { return }
        let project = try BakeProject(formats: """
                  big:
                    size: 512x512
                    style: 32BitBGRA
                    maximumCount: 40
                  small:
                    size: 64x64
                    style: 32BitBGR
                    maximumCount: 40

            """)
        for i in 0..<30 { try project.add("p\(i).jpg", from: Corpus.photo("Landscape_\(i % 8)")) }
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path, "--format", "json", "--jobs", "1"])
        #expect(result.status == 1, "\(result.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        let fatal = document["fatal"] as? [String: Any]
        #expect(fatal?["code"] as? String == "no-space", "\(document)")
        let tables = (document["tables"] as? [[String: Any]]) ?? []
        let entries = tables.map { $0["entries"] as? Int ?? -1 }
        #expect(entries.count == 2 && entries.allSatisfy { $0 > 5 && $0 < 30 }, "what fits is written: \(entries)")
        let decoded = (document["sources"] as? [String: Any])?["decoded"] as? Int
        #expect(decoded == entries.first, "the counts are the run's: \(String(describing: decoded))")
        for name in ["big", "small"] {
            let report = TableVerifier.verify(path: disk.path + "/\(name).imagetable")
            #expect(report.isValid && report.validEntries == entries.first, "\(name): \(report.problems)")
        }
    }

    /// A tmpfs that fills part-way through a bake: every source found is counted (the one whose
    /// slot could not be reserved was counted nowhere), and the next bake on the full disk says
    /// `no-space`, where it said `corrupt` ("database disk image is malformed") of a sound state
    /// it had read without its WAL.
    @Test func aTmpfsThatFillsCountsEverySourceAndTheStateStaysReadable() throws {
        guard let disk = try ScratchMount.mount(.tmpfs, megabytes: 2) else { return }
        let project = try BakeProject(formats: "      big:\n        size: 128x128\n        style: 32BitBGRA\n        maximumCount: 40\n")
        for i in 0..<18 { try project.add("p\(i).jpg", from: Corpus.photo(i < 9 ? "Landscape_\(i)" : "Portrait_\(i - 9)")) }
        #expect(FileManager.default.createFile(atPath: disk.path + "/filler", contents: Data(count: 1_100_000)))
        for run in 0..<2 {
            let result = try TestSupport.run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path + "/b", "--format", "json",
                                                                    "--no-progress"])
            let document = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
            #expect(result.status == 1 && (document["fatal"] as? [String: Any])?["code"] as? String == "no-space", "\(run): \(document)")
            // The second writes nothing before the disk refuses it: its counts are 0, as documented.
            guard run == 0 else { continue }
            let sources = try #require(document["sources"] as? [String: Int])
            let counted = ["decoded", "unchanged", "failed", "skipped", "notAttempted"].reduce(0) { $0 + (sources[$1] ?? 0) }
            #expect(sources["found"] == 18 && counted == 18 && sources["decoded"]! > 0, "\(sources)")
        }
        try FileManager.default.removeItem(atPath: disk.path + "/filler")
        let freed = try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path + "/b", "--no-progress"])
        #expect(freed.status == 0 && !freed.stderr.contains("state-reset"), "\(freed.stderr)")
    }

    /// With no inode left, the bake state's `-wal` file cannot be made: the bake goes on without
    /// remembering, as for a state it may not write, and says why (it gave only SQLite's
    /// "unable to open database file", which reads as a permission problem).
    @Test func noInodeLeftForTheStateIsSaidSo() throws {
        guard let disk = try ScratchMount.mount(.ext4, megabytes: 16, inodes: 16) else { return }
        let project = try BakeProject(formats: "      thumb:\n        size: 32x32\n        style: 32BitBGRA\n        maximumCount: 10\n")
        try project.add("p0.jpg", from: Corpus.photo("Landscape_0"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path]).status == 0)
        try project.add("p1.jpg", from: Corpus.photo("Landscape_1"))
        for i in 0..<64 where creat(disk.path + "/inode-\(i)", 0o644) >= 0 {}
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("[state-read-only]") && result.stderr.contains("its file system has no inode left"), "\(result.stderr)")
        #expect(try ImageTableReader(path: disk.path + "/thumb.imagetable").count == 2)
    }

    /// A 64×64 `32BitBGRA` table of 200 slots at `path` with slots backed for 150 entries and 3
    /// written, as a stopped bake leaves them: readers look at the records of every backed slot,
    /// past the 3 in use.
    static func writeBackedTable(at path: String) throws {
        let format = TableFormat(name: "thumb", family: "photos", width: 64, height: 64, style: .bgra32, capacity: 200)
        let writer = try ImageTableWriter(path: path, format: format, options: .init(durability: .processCrashOnly))
        defer { writer.close() }
        try writer.preallocate(slots: 150)
        for key in ["a", "b", "c"] {
            let pixels = [UInt8](repeating: 0x7F, count: 64 * 64 * 4)
            try pixels.withUnsafeBytes { _ = try writer.write(key: key, sourceUUID: UUID(), pixels: $0, bytesPerRow: 256) }
        }
    }

    /// `cp` makes holes of a table's runs of zeros; on tmpfs reading a hole through a mapping
    /// takes memory, so on a full tmpfs `verify` and `inspect` died of SIGBUS (status 135).
    @Test(arguments: [false, true])
    func aSparseCopyOnAFullTmpfsIsRefusedNotACrash(holeInRecordsOnly: Bool) throws {
        guard let disk = try ScratchMount.mount(.tmpfs, megabytes: 8) else { return }
        let scratch = try TemporaryDirectory()
        let original = scratch.file("thumb.imagetable")
        try Self.writeBackedTable(at: original)
        let copy = disk.path + "/thumb.imagetable"
        if holeInRecordsOnly {
            // Copied whole, then one hole where the unused records of backed slots lie (records
            // 78 to 157, as a review punched it): the slots have none.
            #expect(try run("/usr/bin/env", ["cp", "--sparse=never", original, copy]).status == 0)
            #expect(try run("/usr/bin/env", ["fallocate", "--punch-hole", "--offset", "20480", "--length", "20480", copy]).status == 0)
        } else {
            // The file is mostly zeros, which cp leaves as holes.
            #expect(try run("/usr/bin/env", ["cp", "--sparse=always", original, copy]).status == 0)
        }
        try disk.fill()
        for arguments in [["verify", copy], ["inspect", copy], ["verify", "--repair", copy]] {
            let result = try run(Products.imagetable, arguments)
            #expect(result.exited && result.status == 1, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("sparse copy") && result.stderr.contains("[no-space]"), "\(arguments): \(result.stderr)")
            // Sizes under a mebibyte in KiB: 20 KiB of holes read "0.0 MiB of holes".
            #expect(!result.stderr.contains("0.0 MiB"), "\(arguments): \(result.stderr)")
        }
        try FileManager.default.removeItem(atPath: disk.path + "/fill")
        let sound = try run(Products.imagetable, ["verify", copy])
        #expect(sound.status == 0, "with room for its holes the copy reads: \(sound.stderr)")
    }

    /// tmpfs says a page that `posix_fallocate` reserved but nothing wrote is a hole (`SEEK_HOLE`),
    /// though its memory is taken: a table written there with slots backed past its entries (a
    /// merge, a bake growing 16 slots at a time) was refused as "holes" once the file system was
    /// full, where reading them takes nothing more; `verify` and `inspect` failed `no-space`.
    @Test func reservedPagesOnAFullTmpfsAreNoHoles() throws {
        guard let disk = try ScratchMount.mount(.tmpfs, megabytes: 8) else { return }
        let path = disk.path + "/thumb.imagetable"
        try Self.writeBackedTable(at: path)
        try disk.fill()
        for arguments in [["verify", path], ["inspect", "--no-entries", path]] {
            let result = try run(Products.imagetable, arguments)
            #expect(result.status == 0, "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(try ImageTableReader(path: path).count == 3)
    }

    /// A bake takes each table's writer lock, opening its lock file for writing: on a read-only
    /// mount it failed ("open lock file failed: Read-only file system") even with every table up
    /// to date. Now it plans as a dry run: nothing to write is a success with a warning, and
    /// something to write stops it before writing, saying what.
    @Test func aBakeOnAReadOnlyFileSystemSucceedsWithNothingToWrite() throws {
        guard let disk = try ScratchMount.mount(.tmpfs, megabytes: 8) else { return }
        let project = try BakeProject(formats: "      thumb:\n        size: 32x32\n        style: 32BitBGRA\n        maximumCount: 10\n")
        try project.add("p0.jpg", from: Corpus.photo("Landscape_0"))
        let bake = ["bake", project.manifestPath, "--output", disk.path, "--format", "json"]
        #expect(try run(Products.imagetable, bake).status == 0)
        let table = disk.path + "/thumb.imagetable"
        let before = try Data(contentsOf: URL(fileURLWithPath: table))
        try disk.remount(readOnly: true)
        defer { try? disk.remount(readOnly: false) }

        let current = try run(Products.imagetable, bake)
        #expect(current.status == 0, "\(current.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: current.output) as? [String: Any])
        let warnings = warningLines(document) ?? []
        #expect(warnings.contains { $0.contains("read-only file system") && $0.hasSuffix("[output-read-only]") }, "\(document)")
        #expect(document["dryRun"] as? Bool == false && (document["sources"] as? [String: Any])?["unchanged"] as? Int == 1, "\(document)")

        try project.add("p1.jpg", from: Corpus.photo("Landscape_1"))
        let stale = try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path])
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("read-only file system, and this bake would write: 1 source to decode")
                && stale.stderr.contains("[not-writable]"), "\(stale.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: table)) == before, "nothing was written")
        // An output directory to be made there is not-writable too (it was `io`).
        let made = try run(Products.imagetable, ["bake", project.manifestPath, "--output", disk.path + "/new", "--format", "json"])
        let fatal = try #require(try JSONSerialization.jsonObject(with: made.output) as? [String: Any])["fatal"] as? [String: Any]
        #expect(made.status == 1 && fatal?["code"] as? String == "not-writable", "\(String(describing: fatal))")
    }

    /// A table file bind-mounted read-only into a writable directory: the bake failed opening
    /// it ("open failed: Read-only file system") with every table up to date; it plans as on a
    /// read-only output directory.
    @Test func aReadOnlyTableInAWritableDirectoryIsPlannedAsReadOnly() throws {
        let project = try BakeProject(formats: "      thumb:\n        size: 32x32\n        style: 32BitBGRA\n        maximumCount: 10\n")
        try project.add("p0.jpg", from: Corpus.photo("Landscape_0"))
        #expect(try run(Products.imagetable, ["bake", project.manifestPath]).status == 0)
        let table = project.tables + "/thumb.imagetable"
        guard try run("/usr/bin/env", ["mount", "--bind", table, table]).status == 0 else { return }
        defer { _ = try? run("/usr/bin/env", ["umount", "-l", table]) }
        #expect(try run("/usr/bin/env", ["mount", "-o", "remount,bind,ro", table]).status == 0)
        let current = try run(Products.imagetable, ["bake", project.manifestPath])
        #expect(current.status == 0 && current.stderr.contains("a table of the output directory is on a read-only file system")
                && current.stderr.contains("[output-read-only]"), "\(current.stderr)")
    }
}

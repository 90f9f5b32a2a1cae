import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Source trees that could hang a bake or lose files silently: FIFOs, sockets and devices are
/// skipped with a warning and never opened, `/proc` and `/dev` as sources end within the bound,
/// a hidden image file is reported rather than lost, and an output directory inside the sources
/// is not taken for sources. Every bake runs under `timeout`: status 124 would mean it hung.
struct HostileSourceTests {
    static let format = "      grid:\n        size: 16x16\n        style: 32BitBGRA\n        maximumCount: 10\n"

    private func bake(_ project: BakeProject, _ extra: [String] = []) throws -> ProcessResult {
        try run("/usr/bin/timeout", ["-s", "KILL", "60", Products.imagetable, "bake", project.manifestPath, "--no-progress"] + extra)
    }

    /// Binds a Unix socket at `path` and leaves its file behind.
    private func makeSocket(at path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8).prefix($0.count - 1)) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    @Test func specialFilesAreSkippedWithAWarningWithoutBeingOpened() throws {
        let project = try BakeProject(formats: Self.format)
        try project.add("good.jpg", from: Corpus.photo("Landscape_1"))
        #expect(mkfifo(project.sources + "/pipe.jpg", 0o600) == 0)
        #expect(makeSocket(at: project.sources + "/sock.jpg"))
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/zero.jpg", withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: project.sources + "/to-pipe.jpg", withDestinationPath: project.sources + "/pipe.jpg")
        let result = try bake(project, ["--allow-outside-paths"])
        #expect(result.exited && result.status == 0, "\(result.status) \(result.stderr)")
        #expect(result.stdout.contains("baked 5 sources") && result.stdout.contains("1 decoded, 0 unchanged, 0 failed, 4 skipped"),
                "\(result.stdout)")
        let warnings = result.stderr.split(separator: "\n").map(String.init)
        #expect(warnings == [
            "\(project.sources)/pipe.jpg: warning: a FIFO, not a regular file; skipped without opening it [not-a-regular-file]",
            "\(project.sources)/sock.jpg: warning: a socket, not a regular file; skipped without opening it [not-a-regular-file]",
            "\(project.sources)/to-pipe.jpg: warning: a symbolic link to a FIFO (\(project.sources)/pipe.jpg), not a regular file; "
                + "skipped without opening it [not-a-regular-file]",
            "\(project.sources)/zero.jpg: warning: a symbolic link to a character device (/dev/zero), not a regular file; "
                + "skipped without opening it [not-a-regular-file]",
        ])
    }

    /// A source swapped for a link leading outside the sources between the scan (which refuses
    /// such links) and its read was followed by the worker: the entry held another file's
    /// pixels, exit 0. It fails as `outside-sources`, and nothing of it is stored.
    @Test func aSourceSwappedForAnOutsideLinkDuringTheBakeIsNotBaked() throws {
        let project = try BakeProject(formats: Self.format)
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        try project.add("b.jpg", from: Corpus.photo("Landscape_2"))
        try FileManager.default.copyItem(atPath: Corpus.photo("Landscape_3"), toPath: project.root + "/outside.jpg")
        let hook = project.root + "/swap"
        try writeExecutable("""
            #!/bin/sh
            [ "$1" = planned ] || exit 0
            rm "\(project.sources)/b.jpg" && ln -s ../outside.jpg "\(project.sources)/b.jpg"
            exit 0

            """, to: hook)
        let result = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress"], environment: ["IMAGETABLE_TEST_HOOK": hook])
        #expect(result.status == 3 && result.stderr.contains("\(project.sources)/b.jpg: error: symbolic link leads outside the sources "
                                                             + "directory (it became one while the bake ran); not baked [outside-sources]"),
                "\(result.status) \(result.stderr)")
        #expect(try ImageTableReader(path: project.tables + "/grid.imagetable").entries().map(\.key) == ["a.jpg"])
    }

    @Test func procAndDevAsSourcesEndWithinTheBound() throws {
        for tree in ["proc", "dev"] {
            let project = try BakeProject(formats: Self.format, include: "**")
            let depth = project.root.split(separator: "/").count
            try project.editManifest { $0.replacingOccurrences(of: "sources: src", with: "sources: " + String(repeating: "../", count: depth) + tree) }
            let result = try bake(project, ["--root", "/", "--jobs", "2", "--format", "json"])
            #expect(result.exited && [0, 3].contains(result.status), "\(tree): \(result.status) \(result.stderr.suffix(500))")
            let document = try JSONSerialization.jsonObject(with: result.output) as? [String: Any]
            #expect(document?["fatal"] == nil, "\(tree)")
        }
    }

    @Test func aHiddenImageIsReportedNotLost() throws {
        let project = try BakeProject(formats: Self.format)
        try project.add("..jpg", from: Corpus.photo("Landscape_1"))
        try project.add("shown.jpg", from: Corpus.photo("Landscape_2"))
        project.add(".DS_Store", bytes: [0, 0, 0, 1])
        let skipped = try bake(project)
        #expect(skipped.exited && skipped.status == 0)
        #expect(skipped.stderr == "\(project.sources)/..jpg: warning: the name starts with '.', so the patterns' wildcards do not match it "
                + "(hidden files are skipped); to take it, add a pattern that spells the dot, such as '**/.*' [hidden-file]\n")
        #expect(skipped.stdout.contains("1 decoded, 0 unchanged, 0 failed, 1 skipped"), "\(skipped.stdout)")

        try project.editManifest { $0.replacingOccurrences(of: "    sources: src\n", with: "    sources: src\n    include: [\"*.jpg\", \".*.jpg\"]\n") }
        let taken = try bake(project)
        #expect(taken.status == 0 && taken.stderr.isEmpty, "\(taken.stderr)")
        #expect(try project.entries()["grid.imagetable"]?.keys.sorted() == ["..jpg", "shown.jpg"])
    }

    /// `output: src/tables` with `include: "**"`: the tables, lock files and bake state were
    /// scanned as sources and skipped with warnings on every bake.
    @Test func anOutputDirectoryInsideTheSourcesIsNotScanned() throws {
        let project = try BakeProject(formats: Self.format, include: "**")
        try project.editManifest { $0.replacingOccurrences(of: "output: tables", with: "output: src/tables") }
        try project.add("a.jpg", from: Corpus.photo("Landscape_1"))
        for round in 0..<2 {
            let result = try bake(project)
            #expect(result.status == 0 && result.stderr.isEmpty, "round \(round): \(result.stderr)")
            #expect(result.stdout.contains("baked 1 source "), "round \(round): \(result.stdout)")
        }
    }
}

import Foundation
import TestSupport
import Testing
import ImageManifest
import ImageTableCore
@testable import ImageBake
#if canImport(Glibc)
import Glibc
#endif

struct SourceScannerTests {
    static func tree() throws -> String {
        let root = NSTemporaryDirectory() + "scan-\(UUID().uuidString)"
        let fm = FileManager.default
        for dir in ["a/b", ".hidden", "c"] { try fm.createDirectory(atPath: "\(root)/src/\(dir)", withIntermediateDirectories: true) }
        for file in ["one.jpg", "a/two.PNG", "a/b/three.jpg", "notes.txt", ".DS_Store", ".hidden/x.jpg"] {
            _ = fm.createFile(atPath: "\(root)/src/\(file)", contents: Data([1]))
        }
        _ = fm.createFile(atPath: "\(root)/secret.jpg", contents: Data([2]))
        try fm.createSymbolicLink(atPath: "\(root)/src/c/outside.jpg", withDestinationPath: "\(root)/secret.jpg")
        try fm.createSymbolicLink(atPath: "\(root)/src/c/inside.jpg", withDestinationPath: "\(root)/src/one.jpg")
        try fm.createSymbolicLink(atPath: "\(root)/src/c/loop", withDestinationPath: "\(root)/src")
        return root
    }

    @Test func findsMatchingFilesSortedWithPosixKeys() throws {
        let root = try Self.tree()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let images: @Sendable (String) -> Bool = { !$0.hasPrefix(".") && !$0.contains("/.") && !$0.hasSuffix(".txt") }
        let (sources, skipped) = try SourceScanner(root: "\(root)/src", selects: images).scan()
        let outsideTarget = "\(root)/secret.jpg"
        #expect(sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "one.jpg"])
        let loop = ImageTableError(.notARegularFile, "a symbolic link to a directory on its own way (\(root)/src); not followed, "
                                   + "since it would loop: its files are found where it leads", path: "\(root)/src/c/loop", key: "c/loop")
        #expect(skipped == [loop, ImageTableError(.outsideSources, "symbolic link leads outside the sources directory (\(outsideTarget)); "
                                                  + "not baked (--allow-outside-paths follows it)",
                                                  path: "\(root)/src/c/outside.jpg", key: "c/outside.jpg")])
        let all = try SourceScanner(root: "\(root)/src", allowOutside: true, selects: images).scan()
        #expect(all.sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "c/outside.jpg", "one.jpg"])
        // A link to a directory above its own is not followed, whatever the patterns say.
        let everything = try SourceScanner(root: "\(root)/src", selects: { _ in true }).scan()
        #expect(everything.sources.map(\.key) == [".DS_Store", ".hidden/x.jpg", "a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "notes.txt", "one.jpg"])
    }

    @Test func aMissingDirectoryIsAnError() {
        let error = #expect(throws: ImageTableError.self) { try SourceScanner(root: "/nonexistent/dir", selects: { _ in true }).scan() }
        #expect(error?.code == .sourcesUnreadable)
    }

    /// Creates a file whose name is raw bytes (not necessarily UTF-8) in `directory`.
    static func create(_ name: [UInt8], in directory: String, directory isDirectory: Bool = false) -> Bool {
        let path = (Array(directory.utf8) + [0x2F] + name + [0]).map { CChar(bitPattern: $0) }
        if isDirectory { return mkdir(path, 0o755) == 0 }
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        defer { close(fd) }
        return fd >= 0
    }

    /// Foundation's directory listing leaves out names that are not UTF-8; the scan reports them.
    @Test func namesThatAreNotUTF8AreReportedWithTheirBytesEscaped() throws {
        let root = NSTemporaryDirectory() + "scan-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        #expect(Self.create([0x69, 0xFF, 0xFE, 0x2E, 0x6A, 0x70, 0x67], in: root + "/sub"))  // i\xFF\xFE.jpg
        #expect(Self.create([0x61, 0xC3, 0xA9, 0xE2, 0x82, 0x2E, 0x6A, 0x70, 0x67], in: root))  // aé, then a cut character
        #expect(Self.create([0x6E, 0x6F, 0x74, 0x65, 0xFF, 0x2E, 0x74, 0x78, 0x74], in: root))  // note\xFF.txt: not selected
        #expect(Self.create([0x64, 0x69, 0x72, 0x80], in: root, directory: true))  // dir\x80
        #expect(Self.create([0x64, 0x69, 0x72, 0x80] + Array("/hidden-by-its-directory.jpg".utf8), in: root))
        _ = FileManager.default.createFile(atPath: root + "/good.jpg", contents: Data([1]))
        let (sources, skipped) = try SourceScanner(root: root, selects: { $0.hasSuffix(".jpg") }).scan()
        #expect(sources.map(\.key) == ["good.jpg"])
        let file = "the name is not UTF-8, so it cannot be a key; rename it (bytes outside UTF-8 are shown as \\xFF)"
        let dir = "a directory whose name is not UTF-8: nothing in it is scanned; rename it (bytes outside UTF-8 are shown as \\xFF)"
        #expect(skipped == [
            ImageTableError(.nameNotUTF8, file, path: root + "/a\u{E9}\\xE2\\x82.jpg", key: "a\u{E9}\\xE2\\x82.jpg"),
            ImageTableError(.nameNotUTF8, dir, path: root + "/dir\\x80", key: "dir\\x80"),
            ImageTableError(.nameNotUTF8, file, path: root + "/sub/i\\xFF\\xFE.jpg", key: "sub/i\\xFF\\xFE.jpg"),
        ])
    }

    /// A directory named like an image is scanned and reported; so is a link to a directory
    /// named so. A directory named otherwise is only scanned.
    @Test func directoriesNamedLikeImagesAreScannedAndReported() throws {
        let root = NSTemporaryDirectory() + "scan-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for dir in ["folder.jpg", "plain", "Album.PNG/inner.webp"] {
            try FileManager.default.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(atPath: root + "/folder.jpg/inside.jpg", contents: Data([1]))
        _ = FileManager.default.createFile(atPath: root + "/plain/p.jpg", contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: root + "/link.gif", withDestinationPath: root + "/plain")
        let (sources, skipped) = try SourceScanner(root: root, selects: { _ in true }).scan()
        #expect(sources.map(\.key) == ["folder.jpg/inside.jpg", "link.gif/p.jpg", "plain/p.jpg"])
        let named = "a directory named like an image, not a regular file; it is scanned for sources, not baked"
        #expect(skipped == [
            ImageTableError(.notARegularFile, named, path: root + "/Album.PNG", key: "Album.PNG"),
            ImageTableError(.notARegularFile, named, path: root + "/Album.PNG/inner.webp", key: "Album.PNG/inner.webp"),
            ImageTableError(.notARegularFile, named, path: root + "/folder.jpg", key: "folder.jpg"),
            ImageTableError(.notARegularFile, "a symbolic link to a directory named like an image, not a regular file; "
                            + "it is scanned for sources, not baked", path: root + "/link.gif", key: "link.gif"),
        ])
    }
}

/// Links to directories: followed under their own keys where the sources' links may lead; one
/// that may not be followed keeps its files' entries; loops and link bombs end. A directory
/// moved out of the sources and linked back in vanished from the scan without a word, and
/// `--prune` deleted its entries.
struct DirectoryLinkTests {
    static func tree() throws -> (root: String, remove: () -> Void) {
        let root = NSTemporaryDirectory() + "dirlinks-\(UUID().uuidString)"
        let fm = FileManager.default
        for dir in ["src/real/deep", "elsewhere/photos"] { try fm.createDirectory(atPath: "\(root)/\(dir)", withIntermediateDirectories: true) }
        for file in ["src/top.jpg", "src/real/a.jpg", "src/real/deep/b.jpg", "elsewhere/photos/c.jpg"] {
            _ = fm.createFile(atPath: "\(root)/\(file)", contents: Data([1]))
        }
        return (root, { try? fm.removeItem(atPath: root) })
    }

    @Test func aLinkToADirectoryInsideIsScannedUnderItsOwnKey() throws {
        let (root, remove) = try Self.tree()
        defer { remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/src/current", withDestinationPath: "real")
        let scan = try SourceScanner(root: root + "/src", selects: { $0.hasSuffix(".jpg") }).scanAll()
        #expect(scan.sources.map(\.key) == ["current/a.jpg", "current/deep/b.jpg", "real/a.jpg", "real/deep/b.jpg", "top.jpg"])
        #expect(scan.skipped.isEmpty && scan.unlisted.isEmpty)
        // Read through the link, as the key says.
        #expect(scan.sources[0].path == root + "/src/current/a.jpg" && FileStat(path: scan.sources[0].path) != nil)
    }

    @Test func aLinkLeadingOutsideKeepsItsEntriesUnlessAllowed() throws {
        let (root, remove) = try Self.tree()
        defer { remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/src/photos", withDestinationPath: root + "/elsewhere/photos")
        let scan = try SourceScanner(root: root + "/src", selects: { $0.hasSuffix(".jpg") }).scanAll()
        #expect(scan.sources.map(\.key) == ["real/a.jpg", "real/deep/b.jpg", "top.jpg"])
        #expect(scan.skipped == [ImageTableError(.outsideSources, "symbolic link to a directory leads outside the sources directory "
                                                 + "(\(root)/elsewhere/photos); not followed, its files' entries are kept as they are "
                                                 + "(--allow-outside-paths follows it)", path: root + "/src/photos", key: "photos")])
        #expect(scan.unlisted == ["photos"] && scan.directories == ["photos"])
        let allowed = try SourceScanner(root: root + "/src", allowOutside: true, selects: { $0.hasSuffix(".jpg") }).scanAll()
        #expect(allowed.sources.map(\.key) == ["photos/c.jpg", "real/a.jpg", "real/deep/b.jpg", "top.jpg"] && allowed.skipped.isEmpty)
    }

    /// Several links to one directory: the one of the smallest key in its directory is followed,
    /// whatever order the file system lists them in (ext4 and tmpfs listed them differently,
    /// and a link added later could take the directory from one a bake had followed, whose
    /// entries `--prune` then deleted); the others keep their entries.
    @Test func whichLinkIsFollowedDoesNotHangOnTheListingOrder() throws {
        let (root, remove) = try Self.tree()
        defer { remove() }
        for name in ["photos", "zz", "mm", "alias"] {
            try FileManager.default.createSymbolicLink(atPath: root + "/src/" + name, withDestinationPath: root + "/src/real")
        }
        let scan = try SourceScanner(root: root + "/src", selects: { $0.hasSuffix(".jpg") }).scanAll()
        #expect(scan.sources.map(\.key) == ["alias/a.jpg", "alias/deep/b.jpg", "real/a.jpg", "real/deep/b.jpg", "top.jpg"])
        #expect(scan.unlisted == ["mm", "photos", "zz"])
        #expect(scan.skipped.map(\.message).allSatisfy { $0.contains("already scanned through 'alias'") }, "\(scan.skipped)")
    }

    /// The path the kernel gives a directory opened through a link: where the scan checks it lies.
    @Test func anOpenedDirectoryIsNamedByItsRealPath() throws {
        let (root, remove) = try Self.tree()
        defer { remove() }
        try FileManager.default.createSymbolicLink(atPath: root + "/src/link", withDestinationPath: root + "/elsewhere")
        let fd = open(root + "/src/link/photos", O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        #expect(fd >= 0 && SourceScanner.openedPath(fd) == SourceScanner.realPath(root + "/elsewhere/photos"))
    }

    /// Links that lead to each other, to the root, to `/`, and two links to each of 24 nested
    /// directories (2^24 ways, were every way listed): each directory is entered through links
    /// once, and never through one on its own way.
    @Test func loopsAndLinkBombsEnd() throws {
        let (root, remove) = try Self.tree()
        defer { remove() }
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/src/x", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root + "/src/real/to-x", withDestinationPath: "../x")
        try fm.createSymbolicLink(atPath: root + "/src/x/to-real", withDestinationPath: "../real")
        try fm.createSymbolicLink(atPath: root + "/src/x/root", withDestinationPath: "..")
        try fm.createSymbolicLink(atPath: root + "/src/x/slash", withDestinationPath: "/")
        var level = root + "/src/bomb"
        for i in 0..<24 {
            try fm.createDirectory(atPath: level + "/d", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: level + "/l1", withDestinationPath: "d")
            try fm.createSymbolicLink(atPath: level + "/l2", withDestinationPath: "d")
            _ = fm.createFile(atPath: level + "/f\(i).jpg", contents: Data([1]))
            level += "/d"
        }
        let scan = try SourceScanner(root: root + "/src", allowOutside: true, selects: { $0.hasSuffix(".jpg") }).scanAll()
        // The bomb's 24 files, and those below each of its 23 link targets once more: 300.
        #expect(scan.sources.count < 320, "\(scan.sources.count) sources")
        #expect(scan.sources.map(\.key).contains("real/to-x/to-real/a.jpg") == false, "a link back to a directory on its way")
        #expect(scan.sources.map(\.key).contains("x/to-real/a.jpg") && scan.sources.map(\.key).contains("real/to-x/root/top.jpg") == false)
        let loops = scan.skipped.filter { $0.message.contains("would loop") }.compactMap(\.key)
        #expect(loops.contains("x/root") && loops.contains("x/slash"), "\(loops)")
        #expect(scan.skipped.contains { $0.message.contains("not followed twice") })
        // Where the patterns cannot reach (a `lib64 -> lib` in a hidden `.venv`), not a word.
        let narrow = try SourceScanner(root: root + "/src", allowOutside: true, mayHoldSources: { !$0.hasPrefix("x") && !$0.hasPrefix("bomb") },
                                       selects: { $0.hasSuffix(".jpg") }).scanAll()
        #expect(!narrow.skipped.contains { $0.key?.hasPrefix("x/") == true || $0.key?.hasPrefix("bomb/") == true }, "\(narrow.skipped)")
    }
}

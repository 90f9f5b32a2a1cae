import Foundation
import Testing
@testable import ImageBake

struct GlobTests {
    @Test(arguments: [
        ("**/*.jpg", "a.jpg", true), ("**/*.jpg", "x/y/a.JPG", true), ("**/*.jpg", "a.jpeg", false),
        ("*.png", "a.png", true), ("*.png", "d/a.png", false), ("photos/**", "photos/a/b.gif", true),
        ("photos/**", "other/a.gif", false), ("**/*.{jpg,jpeg,png}", "q/r.jpeg", true), ("img?.png", "img1.png", true),
        ("img?.png", "img10.png", false), ("[a-c]*.png", "banana.png", true), ("[!a-c]*.png", "banana.png", false),
        ("a/**/b.png", "a/b.png", true), ("a/**/b.png", "a/x/y/b.png", true), ("a/*/b.png", "a/x/y/b.png", false),
        ("\\*.png", "*.png", true), ("\\*.png", "x.png", false),
    ])
    func matching(pattern: String, path: String, expected: Bool) throws {
        #expect(try Glob(pattern).matches(path) == expected)
    }

    @Test func badPatternsAreErrors() {
        for bad in ["", "[abc", "{a,b", "x\\", "[z-a]"] {
            #expect(throws: GlobError.self, "\(bad)") { try Glob(bad) }
        }
    }
}

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
        let scanner = SourceScanner(root: "\(root)/src", include: [try Glob("**/*.{jpg,png}")])
        let (sources, skipped) = try scanner.scan()
        #expect(sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "one.jpg"])
        #expect(skipped == [SkippedSource(key: "c/outside.jpg", reason: "symbolic link leads outside the sources directory")])
        let all = try SourceScanner(root: "\(root)/src", exclude: [try Glob("**/*.txt")], allowOutside: true).scan()
        #expect(all.sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "c/outside.jpg", "one.jpg"])
    }

    @Test func aMissingDirectoryIsAnError() {
        let error = #expect(throws: BakeError.self) { try SourceScanner(root: "/nonexistent/dir").scan() }
        #expect(error?.code == .sourcesUnreadable)
    }
}

import Foundation
import TestSupport
import Testing
import ImageManifest
import ImageTableCore
@testable import ImageBake

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
        #expect(sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "one.jpg"])
        #expect(skipped == [ImageTableError(.outsideSources, "symbolic link leads outside the sources directory",
                                            path: "\(root)/src/c/outside.jpg", key: "c/outside.jpg")])
        let all = try SourceScanner(root: "\(root)/src", allowOutside: true, selects: images).scan()
        #expect(all.sources.map(\.key) == ["a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "c/outside.jpg", "one.jpg"])
        // Directory links are never followed, whatever the patterns say.
        let everything = try SourceScanner(root: "\(root)/src", selects: { _ in true }).scan()
        #expect(everything.sources.map(\.key) == [".DS_Store", ".hidden/x.jpg", "a/b/three.jpg", "a/two.PNG", "c/inside.jpg", "notes.txt", "one.jpg"])
    }

    @Test func aMissingDirectoryIsAnError() {
        let error = #expect(throws: ImageTableError.self) { try SourceScanner(root: "/nonexistent/dir", selects: { _ in true }).scan() }
        #expect(error?.code == .sourcesUnreadable)
    }
}

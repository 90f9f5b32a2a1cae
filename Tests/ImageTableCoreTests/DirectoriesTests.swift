import Foundation
import ImageTableCore
import TestSupport
import Testing

/// `Directories.make`, which makes an output directory and those above it, naming the part in
/// the way where Foundation said "NSCocoaErrorDomain error 512" and mkdir "File exists".
@Suite struct DirectoriesTests {
    @Test func makesEveryMissingDirectoryAndAcceptsExistingOnes() throws {
        let scratch = try TemporaryDirectory()
        try Directories.make(scratch.file("a/b/c/"))
        try Directories.make(scratch.file("a/b/c"))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: scratch.file("a/b/c"), isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    /// Foundation's `deletingLastPathComponent` died by SIGILL on `M`, `M/` and `.`.
    @Test(arguments: [("M", "."), ("M/", "."), (".", "."), ("é", "."), ("ab", "."), ("a/M", "a"), ("a//M/", "a"),
                      ("/M", "/"), ("/", "/"), ("//M", "/"), ("./M", "."), ("../out", ".."), ("/a/b/c", "/a/b")])
    func theParentOfAPathIsTakenAsText(path: String, parent: String) {
        #expect(Directories.parent(of: path) == parent)
    }

    @Test func namesTheFileOrTheBrokenLinkInTheWay() throws {
        let scratch = try TemporaryDirectory()
        try scratch.write("file", "x")
        try FileManager.default.createSymbolicLink(atPath: scratch.file("dangling"), withDestinationPath: "nowhere")
        for (path, message) in [("file/x/y", "\(scratch.file("file")) exists and is not a directory"),
                                ("dangling/x", "\(scratch.file("dangling")) is a symbolic link to something that does not exist")] {
            #expect(throws: ImageTableError.self) { try Directories.make(scratch.file(path)) }
            do throws(ImageTableError) {
                try Directories.make(scratch.file(path))
            } catch {
                #expect(error.message == message && error.path == path.split(separator: "/").first.map { scratch.file(String($0)) })
                #expect(error.code == (path.hasPrefix("file") ? .notADirectory : .io), "\(error)")
                let failure = Directories.failure(error, making: "the output directory", path: path)
                #expect(failure.message == "cannot create the output directory: " + message && failure.path == path)
            }
        }
        do throws(ImageTableError) {
            try Directories.make("")
            Issue.record("an empty path was made")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}

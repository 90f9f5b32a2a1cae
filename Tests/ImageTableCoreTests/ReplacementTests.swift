import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A reader can tell, with one `lstat`, that its path now names another file, and open a set of
/// tables that were replaced together.
struct ReplacementTests {
    @Test func aReaderNoticesARenameOverItsPathAndNothingElse() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let writer = try openTable(path, descriptor())
        try put(writer, "a")
        let reader = try ImageTableReader(path: path)
        #expect(!reader.isReplaced)
        // Writes in place and a chmod are not replacements.
        try put(writer, "b")
        writer.close()
        #expect(chmod(path, 0o600) == 0)
        #expect(!reader.isReplaced)
        // A new table renamed over the path is.
        let other = dir.file("new.imagetable")
        let replacement = try openTable(other, descriptor())
        try put(replacement, "c")
        replacement.close()
        #expect(rename(other, path) == 0)
        #expect(reader.isReplaced)
        #expect(reader.entry(forKey: "b") != nil && reader.entry(forKey: "c") == nil)
        let reopened = try reader.reopen()
        #expect(!reopened.isReplaced && reopened.entry(forKey: "c") != nil && reopened.entry(forKey: "b") == nil)
        // So is a path that names nothing.
        #expect(unlink(path) == 0)
        #expect(reopened.isReplaced)
    }

    @Test func openSetRetriesWhileATableIsMissingThenGivesUp() throws {
        let dir = try TemporaryDirectory()
        let paths = ["a", "b"].map { dir.file("\($0).imagetable") }
        for path in paths { try openTable(path, descriptor()).close() }
        let readers = try ImageTableReader.openSet(paths: paths)
        #expect(readers.map(\.path) == paths && readers.allSatisfy { !$0.isReplaced })
        #expect(unlink(paths[1]) == 0)
        let error = #expect(throws: ImageTableError.self) { try ImageTableReader.openSet(paths: paths, attempts: 3) }
        #expect(error?.code == .notFound)
    }
}

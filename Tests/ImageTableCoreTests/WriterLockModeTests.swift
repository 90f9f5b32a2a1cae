import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A lock file takes the table's protection when it is made, and keeps its mode otherwise: a
/// bake refused for another manifest's table (`shared-table`, after it took the locks) turned
/// that table's lock file from 0644 to 0600.
struct WriterLockModeTests {
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }

    @Test func aLockFileIsMadeWithTheTablesModeAndLeftWithItsOwn() throws {
        let dir = try TemporaryDirectory()
        let fresh = try WriterLock(tablePath: dir.file("new.imagetable"), permissions: 0o600, timeout: 1)
        #expect(Self.mode(dir.file("new.imagetable.lock")) == 0o600)
        fresh.release()

        let existing = dir.file("old.imagetable.lock")
        #expect(FileManager.default.createFile(atPath: existing, contents: nil, attributes: [.posixPermissions: 0o644]))
        let lock = try WriterLock(tablePath: dir.file("old.imagetable"), permissions: 0o600, timeout: 1)
        #expect(Self.mode(existing) == 0o644)
        lock.release()
    }
}

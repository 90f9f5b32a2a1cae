import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

struct PermissionTests {
    static func mode(_ path: String) -> UInt16 {
        var st = stat()
        _ = stat(path, &st)
        return UInt16(st.st_mode & 0o7777)
    }

    /// The umask is process-wide, so each table is made in a child process with its own.
    @Test(arguments: ProtectionMode.allCases)
    func tablesGetExactlyTheirProtectionsModeWhateverTheUmask(protection: ProtectionMode) throws {
        for mask in ["000", "022", "077", "277"] {
            let dir = try TemporaryDirectory()
            let path = dir.file("t.imagetable")
            let result = try run(Products.fixture, ["create-with-umask", path, mask, protection.rawValue])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.mode(path) == protection.permissions, "umask \(mask)")
        }
    }

    @Test func looserThanRecordedIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor(protection: .complete)).close()
        chmod(path, 0o644)
        let error = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
        #expect(error?.code == .insecureFile)
        #expect(error?.message.contains("looser than its protection 'complete'") == true)
        #expect(throws: ImageTableError.self) { try openTable(path, descriptor(protection: .complete)) }
        // Stricter than recorded is fine.
        chmod(path, 0o400)
        #expect(try ImageTableReader(path: path).count == 0)
    }

    @Test func groupOrOtherWritableIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor()).close()
        for mode: mode_t in [0o664, 0o646] {
            chmod(path, mode)
            let error = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
            #expect(error?.message.contains("group- or other-writable") == true)
        }
    }

    @Test func symlinksHardLinksAndDirectoriesAreRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor()).close()
        symlink(path, dir.file("link.imagetable"))
        #expect((#expect(throws: ImageTableError.self) { try ImageTableReader(path: dir.file("link.imagetable")) })?.code == .insecureFile)
        link(path, dir.file("hard.imagetable"))
        #expect((#expect(throws: ImageTableError.self) { try ImageTableReader(path: path) })?.message.contains("hard links") == true)
        mkdir(dir.file("d.imagetable"), 0o755)
        #expect(throws: ImageTableError.self) { try ImageTableReader(path: dir.file("d.imagetable")) }
    }
}

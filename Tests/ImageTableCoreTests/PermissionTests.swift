import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Serialised: the umask is process-wide.
@Suite(.serialized)
struct PermissionTests {
    static func mode(_ path: String) -> UInt16 {
        var st = stat()
        _ = stat(path, &st)
        return UInt16(st.st_mode & 0o7777)
    }

    @Test(arguments: ProtectionMode.allCases)
    func tablesGetExactlyTheirProtectionsModeWhateverTheUmask(protection: ProtectionMode) throws {
        for mask: mode_t in [0o000, 0o022, 0o077, 0o277] {
            let dir = try TemporaryDirectory()
            let path = dir.file("t.imagetable")
            let old = umask(mask)
            defer { umask(old) }
            let table = try openTable(path, descriptor(protection: protection))
            #expect(Self.mode(path) == protection.permissions, "umask \(String(mask, radix: 8))")
            table.close()
        }
    }

    @Test func looserThanRecordedIsRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor(protection: .complete)).close()
        chmod(path, 0o644)
        let error = #expect(throws: TableError.self) { try ImageTableReader(path: path) }
        #expect(error?.code == .insecureFile)
        #expect(error?.message.contains("looser than its protection 'complete'") == true)
        #expect(throws: TableError.self) { try openTable(path, descriptor(protection: .complete)) }
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
            let error = #expect(throws: TableError.self) { try ImageTableReader(path: path) }
            #expect(error?.message.contains("group- or other-writable") == true)
        }
    }

    @Test func symlinksHardLinksAndDirectoriesAreRefused() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor()).close()
        symlink(path, dir.file("link.imagetable"))
        #expect((#expect(throws: TableError.self) { try ImageTableReader(path: dir.file("link.imagetable")) })?.code == .insecureFile)
        link(path, dir.file("hard.imagetable"))
        #expect((#expect(throws: TableError.self) { try ImageTableReader(path: path) })?.message.contains("hard links") == true)
        mkdir(dir.file("d.imagetable"), 0o755)
        #expect(throws: TableError.self) { try ImageTableReader(path: dir.file("d.imagetable")) }
    }
}

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

    /// A reader refuses a table more users may read than its protection allows; a writer that
    /// owns it tightens the mode and says so (every bake stopped at a table whose mode a CI
    /// artifact's restore had made 0644). One that others may write stays refused.
    @Test func looserThanRecordedIsRefusedByReadersAndTightenedByItsWriter() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor(protection: .complete)).close()
        chmod(path, 0o644)
        let error = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
        #expect(error?.code == .insecureFile)
        #expect(error?.message.contains("looser than its protection 'complete'") == true)
        let writer = try openTable(path, descriptor(protection: .complete))
        #expect(writer.notices.map(\.kind) == [.tightenedPermissions] && Self.mode(path) == 0o600)
        #expect(writer.notices.first?.message == "permissions 0644 were looser than its protection 'complete' allows; "
                + "set them to 0600")
        writer.close()
        #expect(try ImageTableReader(path: path).count == 0)
        chmod(path, 0o664)
        #expect((#expect(throws: ImageTableError.self) { try openTable(path, descriptor(protection: .complete)) })?.code == .insecureFile)
        // Stricter than recorded is fine.
        chmod(path, 0o400)
        #expect(try ImageTableReader(path: path).count == 0)
    }

    /// A reader that plans for a writer (a dry run) reads a table whose mode the writer would
    /// tighten, says so, and changes nothing; one others may write stays refused to it too.
    @Test func aPlanningReaderReadsWhatItsWriterWouldMend() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        try openTable(path, descriptor(protection: .complete)).close()
        chmod(path, 0o644)
        let reader = try ImageTableReader(path: path, planning: true)
        #expect(reader.count == 0 && Self.mode(path) == 0o644)
        #expect(reader.writerNotices.map(\.kind) == [.tightenedPermissions])
        #expect(reader.writerNotices.first?.message == "permissions 0644 are looser than its protection 'complete' allows; "
                + "would set them to 0600")
        chmod(path, 0o600)
        #expect(try ImageTableReader(path: path, planning: true).writerNotices.isEmpty)
        chmod(path, 0o664)
        #expect((#expect(throws: ImageTableError.self) { try ImageTableReader(path: path, planning: true) })?.code == .insecureFile)
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

    /// "open failed: Permission denied" named neither who may write the file nor who asked: a
    /// cron job run as another user could not tell which of the table, its lock file or their
    /// directory refused. The message names the file (or its directory when the file is not
    /// there), its owner and mode, and this process's user.
    @Test func aPermissionErrorNamesTheOwnerAndTheUser() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable.lock")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(chmod(path, 0o640) == 0)
        let error = ImageTableError.system("open lock file", path: path, errno: EACCES)
        #expect(error.code == .permissionDenied && error.message == "open lock file failed: Permission denied; t.imagetable.lock is owned "
                + "by uid \(getuid()) with mode 0640, and this process runs as uid \(geteuid()): run it as the owner, or change the owner or "
                + "mode (chown, chmod)", "\(error.message)")
        #expect(chmod(dir.path, 0o750) == 0)
        let missing = ImageTableError.system("open", path: dir.file("none"), errno: EACCES)
        #expect(missing.message.hasPrefix("open failed: Permission denied; its directory \(dir.path) is owned by uid \(getuid()) with mode 0750,"),
                "\(missing.message)")
    }
}

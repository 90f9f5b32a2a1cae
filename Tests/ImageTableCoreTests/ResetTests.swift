import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

struct ResetTests {
    @Test func changedParametersRebuildTheTableWithANotice() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let changes: [TableFormat] = [
            descriptor(width: 8), descriptor(style: .bgr16), descriptor(capacity: 5),
            descriptor(rendering: RenderingOptions(fit: .contain)), descriptor(protection: .complete), descriptor("other"),
        ]
        for changed in changes {
            do {
                let table = try openTable(path, descriptor())
                try put(table, "k")
            }
            let reopened = try openTable(path, changed)
            #expect(reopened.count == 0, "\(changed)")
            #expect(reopened.notices.map(\.kind) == [.reset])
            #expect(reopened.header.parametersHash == changed.parametersHash)
            reopened.close()
            _ = unlink(path)
        }
    }

    /// A rebuild for a rendering option alone said "format parameters changed (A → A)": the
    /// header keeps those options only in its hash, which the notice now says.
    @Test func aRebuildForARenderingOptionSaysSo() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do { try put(try openTable(path, descriptor()), "k") }
        let reopened = try openTable(path, descriptor(rendering: RenderingOptions(fit: .contain)))
        let message = try #require(reopened.notices.first?.message)
        #expect(message.hasSuffix("; a rendering option differs (fit, crop, background, corner radius or upscale), which the header "
                                  + "records only in its parameter hash); rebuilt the table empty"), "\(message)")
        #expect(!message.contains("→"))
    }

    @Test func sameParametersKeepTheEntries() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do { try put(try openTable(path, descriptor()), "k") }
        let table = try openTable(path, descriptor())
        #expect(table.count == 1 && table.notices.isEmpty)
    }

    @Test func aFileThatIsNotATableIsNeverOverwritten() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("precious.imagetable")
        let precious = Data("my thesis".utf8)
        _ = FileManager.default.createFile(atPath: path, contents: precious, attributes: [.posixPermissions: 0o644])
        let error = #expect(throws: ImageTableError.self) { try openTable(path, descriptor()) }
        #expect(error?.code == .notATable)
        #expect(FileManager.default.contents(atPath: path) == precious)
    }

    /// An empty file holds nothing to lose: a writer makes the table there (it was refused as
    /// `not-a-table`, which stopped a runtime cache from opening at all), and says so.
    @Test func anEmptyFileBecomesTheTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        _ = FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0o644])
        let table = try openTable(path, descriptor())
        #expect(table.count == 0 && table.notices.map(\.message) == ["the file was empty; made the table"])
        try put(table, "k")
        #expect(table.count == 1)
        table.close()
        #expect(try ImageTableReader(path: path).entries().map(\.key) == ["k"])
    }

    @Test func aDamagedHeaderIsRebuiltByWritersAndRejectedByReaders() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do { try put(try openTable(path, descriptor()), "k") }
        let fd = open(path, O_RDWR)
        var byte: UInt8 = 0x7F
        _ = pwrite(fd, &byte, 1, 30)
        close(fd)
        let error = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
        #expect(error?.code == .corrupt)
        let table = try openTable(path, descriptor())
        #expect(table.count == 0 && table.notices.first?.kind == .reset)
        #expect(table.notices.first?.message.contains("header checksum") == true)
    }

    @Test func staleTemporaryFilesOfKilledWritersAreRemoved() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let stale = dir.file(".t.imagetable.tmp-999-1")
        _ = FileManager.default.createFile(atPath: stale, contents: Data([1, 2, 3]))
        let table = try openTable(path, descriptor())
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(table.notices.map(\.kind) == [.removedTemporaryFile])
    }
}

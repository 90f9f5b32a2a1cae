import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A table that a later format version wrote is left alone: a writer refuses it
/// (`unsupported-version`) where it rebuilt it empty as if corrupt, and an older tool sharing a
/// CI cache with a newer one wiped the newer one's tables. A version no tool writes (0, or above
/// 255) is damage, rebuilt as every corrupt table is.
struct NewerVersionTests {
    /// Writes `version` into the header of `path`, with a header checksum that holds.
    static func setVersion(_ version: UInt32, of path: String, checksum: Bool = true) throws {
        var header = [UInt8](try #require(FileManager.default.contents(atPath: path)).prefix(TableLimits.headerBytes))
        header.withUnsafeMutableBytes { raw in
            raw.baseAddress!.storeLE(version, at: 8)
            guard checksum else { return }
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<TableHeader.checksumOffset]))
            raw.baseAddress!.storeLE(crc, at: TableHeader.checksumOffset)
        }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data(header))
        try handle.close()
    }

    /// A table of capacity 4 holding the entry `a`, in `dir`.
    static func tableOfOneEntry(in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        try put(table, "a")
        table.close()
        return path
    }

    @Test func aLaterVersionIsRefusedAndLeftAsItIs() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfOneEntry(in: dir)
        try Self.setVersion(3, of: path)
        let before = try #require(FileManager.default.contents(atPath: path))

        let error = #expect(throws: ImageTableError.self) { try openTable(path, descriptor(capacity: 4)) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.message == "table format version 3 is newer than this build reads (versions 1 and 2); it is left as it is: "
                + "use a newer imagetable, or delete the table to rebuild it", "\(String(describing: error))")
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
    }

    @Test(arguments: [UInt32(0), 256, 0xFFFF_FFFF])
    func aVersionNoToolWritesIsDamage(_ version: UInt32) throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfOneEntry(in: dir)
        try Self.setVersion(version, of: path)
        let readError = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
        #expect(readError?.code == .corrupt)
        let reopened = try openTable(path, descriptor(capacity: 4))
        #expect(reopened.notices.map(\.kind) == [.reset] && reopened.count == 0)
        reopened.close()
    }

    /// A flipped bit in the version (2 → 6) with the checksum left as it was is damage: it was
    /// taken for a later format, refused for good and never rebuilt.
    @Test func aDamagedVersionIsDamageNotALaterFormat() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.tableOfOneEntry(in: dir)
        try Self.setVersion(6, of: path, checksum: false)
        let readError = #expect(throws: ImageTableError.self) { try ImageTableReader(path: path) }
        #expect(readError?.code == .corrupt && readError?.message == "header checksum mismatch")
        let reopened = try openTable(path, descriptor(capacity: 4))
        #expect(reopened.notices.map(\.kind) == [.reset] && reopened.count == 0)
        reopened.close()
    }
}

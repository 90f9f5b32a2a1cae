import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// The family tag of an index record (docs/FORMAT.md, "Family tag").
struct FamilyTagRecordTests {
    /// A reservation's family tag reaches the record (bytes 62 ..< 64, little-endian), a reader's
    /// entry, a retime (which leaves it) and a copy into a new table (merge, export, upgrade).
    @Test func theFamilyTagIsRecordedAndKept() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor(capacity: 4))
        var r = try table.reserve(key: "a", sourceUUID: UUID())
        r.familyTag = 0xBEEF
        let slot = try table.publish([r])[0].slot
        var plain = try table.reserve(key: "b", sourceUUID: UUID())
        plain.sourceModifiedNs = 1
        _ = try table.publish([plain])
        #expect(Array(UnsafeRawBufferPointer(start: table.file.record(slot).base + 62, count: 2)) == [0xEF, 0xBE])
        _ = try table.updateSourceModified([("a", 42)])
        #expect(table.entry(forKey: "a")?.familyTag == 0xBEEF && table.entry(forKey: "b")?.familyTag == FamilyTag.unknown)
        table.close()
        let reader = try ImageTableReader(path: path)
        let copy = dir.file("copy.imagetable")
        let builder = try TableBuilder(path: copy, header: TableBuilder.header(like: reader.header, createdAt: 0))
        for info in reader.entries() { _ = try builder.append(copying: info, from: reader, recency: 1) }
        try builder.finish()
        #expect(try ImageTableReader(path: copy).entries().sorted { $0.key < $1.key }.map(\.familyTag) == [0xBEEF, FamilyTag.unknown])
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// `imagetable verify`: sound tables pass; a flipped byte in a slot or in the index is found,
/// named by slot and key, and fails the command.
struct VerifyTests {
    private func table(_ scratch: TemporaryDirectory) throws -> (TestTable, TableLayout) {
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 20, height: 10, capacity: 6,
                                  keys: ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
        return (table, try table.descriptor.layout())
    }

    @Test func aSoundTablePasses() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        let run = try imagetable("verify", table.path)
        #expect(run.status == 0 && run.stderr.isEmpty)
        #expect(run.stdout == "\(table.path): ok, 4 entries verified\n")
    }

    @Test func aFlippedByteInASlotIsFound() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        try flipByte(in: table.path, at: layout.slotOffset(1) + layout.bytesPerRow * 3 + 17)
        let run = try imagetable("verify", table.path)
        #expect(run.status == 1)
        #expect(run.stderr == "\(table.path): error: slot 1 ('b.jpg'): pixel checksum mismatch [pixel-checksum-mismatch]\n")
        #expect(run.stdout == "\(table.path): 1 problem, 3 entries verified\n")
    }

    @Test func aFlippedByteInTheIndexIsFound() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        // The source UUID of record 2: covered by the record checksum only.
        try flipByte(in: table.path, at: layout.recordOffset(2) + 45)
        // Slot padding of slot 3: covered by the pixel checksum, invisible in the pixels.
        try flipByte(in: table.path, at: layout.slotOffset(3) + layout.bytesPerRow - 1)
        let run = try imagetable("verify", table.path, "--format", "json")
        #expect(run.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(doc["ok"] as? Bool == false && doc["version"] as? Int == 1)
        let t = try #require((doc["tables"] as? [[String: Any]])?.first)
        #expect(t["ok"] as? Bool == false && t["validEntries"] as? Int == 2 && t["error"] == nil)
        let problems = try #require(t["problems"] as? [[String: Any]])
        #expect(problems.count == 2)
        #expect(problems[0]["slot"] as? Int == 2 && problems[0]["key"] as? String == "c.jpg")
        #expect(problems[0]["code"] as? String == "damaged-record" && problems[0]["reason"] as? String == "record checksum mismatch")
        #expect(problems[1]["slot"] as? Int == 3 && problems[1]["key"] as? String == "d.jpg")
        #expect(problems[1]["code"] as? String == "pixel-checksum-mismatch")

        let text = try imagetable("verify", table.path)
        #expect(text.stderr.contains("\(table.path): error: slot 2 ('c.jpg'): record checksum mismatch [damaged-record]\n"))
    }

    @Test func aDamagedHeaderFailsTheTable() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        try flipByte(in: table.path, at: 24)  // width
        let run = try imagetable("verify", table.path)
        #expect(run.status == 1)
        #expect(run.stderr == "\(table.path): error: header checksum mismatch [corrupt]\n")
        #expect(run.stdout == "\(table.path): not verified\n")
    }

    @Test func everyTableIsReportedAndAnyFailureFailsTheRun() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        let other = try TestTable(at: scratch.file("other.imagetable"), style: .grayscale8, keys: ["x"])
        let run = try imagetable("verify", other.path, scratch.file("missing.imagetable"), table.path, "--format", "json")
        #expect(run.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        let tables = try #require(doc["tables"] as? [[String: Any]])
        #expect(tables.map { $0["ok"] as? Bool } == [true, false, true])
        #expect((tables[1]["error"] as? [String: String])?["code"] == "not-found")

        try flipByte(in: table.path, at: layout.slotOffset(0))
        let text = try imagetable("verify", other.path, table.path)
        #expect(text.status == 1 && text.stdout == "\(other.path): ok, 1 entry verified\n\(table.path): 1 problem, 3 entries verified\n")
        #expect(try imagetable("verify", other.path).status == 0)
    }

    @Test func badUsageExits64() throws {
        #expect(try imagetable("verify").status == 64)
        #expect(try imagetable("verify", "t", "--format", "github").status == 64)
        #expect(try imagetable("verify", "t", "--fix").status == 64)
    }
}

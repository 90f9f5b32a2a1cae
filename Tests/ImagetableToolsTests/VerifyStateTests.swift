import Foundation
import ImageTableCore
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `imagetable verify` tells sound (0), interrupted (2: the next bake completes it) and damaged
/// (1) apart, stays quiet about a table a writer is busy with, and `--repair` clears damage.
struct VerifyStateTests {
    private func table(_ scratch: TemporaryDirectory, keys: [String] = ["a.jpg", "b.jpg", "c.jpg", "d.jpg"]) throws -> (TestTable, TableLayout) {
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 20, height: 10, capacity: 6, keys: keys)
        return (table, try table.descriptor.layout())
    }

    /// Makes record `slot`'s generation odd, as a writer killed mid-write leaves it.
    private func interrupt(_ slot: Int, in path: String, layout: TableLayout) throws {
        try flipByte(in: path, at: layout.recordOffset(slot))
    }

    /// With `--repair`, every table's JSON has `cleared`: 0 for one that needed no repair or
    /// could not be opened (it was absent there, so `jq .cleared` read null).
    @Test func repairReportsClearedForEveryTable() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        let json = try imagetable("verify", "--repair", table.path, scratch.file("missing.imagetable"), "--format", "json")
        #expect(json.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let tables = try #require(doc["tables"] as? [[String: Any]])
        #expect(tables.map { $0["state"] as? String } == ["sound", "unverified"])
        #expect(tables.map { $0["cleared"] as? Int } == [0, 0], "\(tables)")
    }

    /// A bake killed while it published a batch leaves an interrupted write in every slot of it:
    /// more than five are one line (a line each said the same thing dozens of times); the JSON
    /// lists each, and damage keeps a line of its own.
    @Test func manyInterruptedWritesAreOneLine() throws {
        let scratch = try TemporaryDirectory()
        let keys = (0..<8).map { "k\($0).jpg" }
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 20, height: 10, capacity: 10, keys: keys)
        let layout = try table.descriptor.layout()
        for slot in 0..<7 { try interrupt(slot, in: table.path, layout: layout) }
        try flipByte(in: table.path, at: layout.slotOffset(7) + 5)
        let run = try imagetable("verify", table.path)
        #expect(run.status == 1)
        #expect(run.stderr == "\(table.path): warning: 7 slots: interrupted write (slots 0, 1, 2, 3, 4, …); the next bake completes them "
                + "[interrupted-write]\n\(table.path): error: slot 7 ('k7.jpg'): pixel checksum mismatch [pixel-checksum-mismatch]\n",
                "\(run.stderr)")
        let json = try imagetable("verify", table.path, "--format", "json")
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let problems = try #require((doc["tables"] as? [[String: Any]])?.first?["problems"] as? [[String: Any]])
        #expect(problems.count { $0["code"] as? String == "interrupted-write" } == 7)
    }

    @Test func anInterruptedWriteExitsTwoAndIsAWarning() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        try interrupt(2, in: table.path, layout: layout)
        let run = try imagetable("verify", table.path)
        #expect(run.status == 2)
        #expect(run.stderr == "\(table.path): warning: slot 2 ('c.jpg'): interrupted write; the next bake completes it [interrupted-write]\n")
        #expect(run.stdout == "\(table.path): interrupted, 1 write for the next bake to complete, 3 entries verified\n")

        let json = try imagetable("verify", table.path, "--format", "json")
        #expect(json.status == 2)
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let t = try #require((doc["tables"] as? [[String: Any]])?.first)
        #expect(doc["ok"] as? Bool == false && t["state"] as? String == "interrupted" && t["ok"] as? Bool == false)
        #expect((t["problems"] as? [[String: Any]])?.first?["code"] as? String == "interrupted-write")
        #expect(t["cleared"] == nil && t["inProgress"] as? Int == 0)

        // Damage anywhere outranks it: exit 1.
        try flipByte(in: table.path, at: layout.slotOffset(0) + 5)
        let damaged = try imagetable("verify", table.path, "--format", "json")
        #expect(damaged.status == 1)
        let state = try #require(try JSONSerialization.jsonObject(with: damaged.output) as? [String: Any])
        #expect(((state["tables"] as? [[String: Any]])?.first?["state"] as? String) == "damaged")
    }

    /// The JSON `state` of a sound table is `sound` (exit 0), and of a file that is no table,
    /// `unverified` (exit 1), each table with its own state in one run.
    @Test func soundAndUnverifiedTablesSaySo() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        let notATable = scratch.file("notes.imagetable")
        #expect(FileManager.default.createFile(atPath: notATable, contents: Data("not a table".utf8)))
        let sound = try imagetable("verify", table.path, "--format", "json")
        let soundDoc = try #require(try JSONSerialization.jsonObject(with: sound.output) as? [String: Any])
        let soundTable = try #require((soundDoc["tables"] as? [[String: Any]])?.first)
        #expect(sound.status == 0 && soundDoc["ok"] as? Bool == true && soundTable["state"] as? String == "sound"
                && soundTable["ok"] as? Bool == true && soundTable["validEntries"] as? Int == 4, "\(soundDoc)")
        let both = try imagetable("verify", table.path, notATable, "--format", "json")
        let bothDoc = try #require(try JSONSerialization.jsonObject(with: both.output) as? [String: Any])
        let states = (bothDoc["tables"] as? [[String: Any]] ?? []).map { $0["state"] as? String ?? "" }
        #expect(both.status == 1 && bothDoc["ok"] as? Bool == false && states == ["sound", "unverified"], "\(bothDoc)")
    }

    /// A damaged hash index is repaired by rebuilding it: no entry is cleared, and the report
    /// says so (it said every entry was cleared for the next bake, and verified 0).
    @Test func aRebuiltIndexClearsNoEntry() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        // Both bucket areas zeroed: no entry is found through the index.
        let fd = open(table.path, O_RDWR)
        let zeros = [UInt8](repeating: 0, count: layout.slotsOffset - layout.bucketsOffset)
        #expect(zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(layout.bucketsOffset)) } == zeros.count)
        close(fd)
        #expect(try imagetable("verify", table.path).stderr.contains("[damaged-index]"))
        let repair = try imagetable("verify", "--repair", table.path, "--format", "json")
        let doc = try #require(try JSONSerialization.jsonObject(with: repair.output) as? [String: Any])
        let t = try #require((doc["tables"] as? [[String: Any]])?.first)
        #expect(t["state"] as? String == "repaired" && t["cleared"] as? Int == 0 && t["validEntries"] as? Int == 4, "\(t)")
        // Nothing is left for a bake to complete: exit 0, and the table is ok as the command leaves it.
        #expect(repair.status == 0 && t["ok"] as? Bool == true && doc["ok"] as? Bool == true, "\(repair.status) \(doc)")
        let again = try imagetable("verify", table.path)
        #expect(again.status == 0 && again.stdout == "\(table.path): ok, 4 entries verified\n")
        // In text: what was done.
        let fd2 = open(table.path, O_RDWR)
        #expect(zeros.withUnsafeBytes { pwrite(fd2, $0.baseAddress, $0.count, off_t(layout.bucketsOffset)) } == zeros.count)
        close(fd2)
        let text = try imagetable("verify", "--repair", table.path)
        #expect(text.status == 0 && text.stdout == "\(table.path): repaired, rebuilt the index, 4 entries verified\n", "\(text.stdout)")
    }

    /// `verify tables/*` names each table's lock file too: passed over beside its table, still
    /// reported when it is named alone.
    @Test func aLockFileBesideItsTableIsPassedOver() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        let lock = table.path + ".lock"
        #expect(FileManager.default.createFile(atPath: lock, contents: nil))
        for command in ["verify", "inspect"] {
            let both = try imagetable(command, lock, table.path)
            #expect(both.status == 0 && both.stderr.isEmpty, "\(command): \(both.stderr)")
            #expect(!both.stdout.contains(".lock"), "\(command): \(both.stdout)")
        }
        let alone = try imagetable("verify", lock)
        #expect(alone.status == 1 && alone.stderr.contains("[not-a-table]"))
    }

    /// A writer in this process rewrites every entry as fast as it can while `verify` runs again
    /// and again: each run exits 0. Before `verify` read records under their seqlock, most runs
    /// exited 1 with `interrupted-write` or `pixel-checksum-mismatch`.
    @Test func verifyDuringWritesExitsZero() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        let stop = Atomic(false)
        let rewrites = Atomic(0)
        let writer = try ImageTableWriter(path: table.path, format: table.descriptor, options: .init(durability: .processCrashOnly))
        let done = DispatchSemaphore(value: 0)
        let keys = table.entries.map(\.key)
        Thread.detachNewThread {
            var n = 0, written = 0
            while !stop.load(ordering: .relaxed) {
                let fill = UInt8(truncatingIfNeeded: n)
                // Only writes that succeeded count: a writer that fails every time tests nothing.
                if (try? writer.write(key: keys[n % keys.count], sourceUUID: UUID()) { r in
                    r.pixels.initializeMemory(as: UInt8.self, repeating: fill)
                    usleep(50)  // keep the slot reserved long enough for the verifier to meet it
                }) != nil { written += 1 }
                n += 1
                rewrites.store(written, ordering: .relaxed)
            }
            done.signal()
        }
        var statuses: [Int32: Int] = [:]
        var firstFailure = ""
        for _ in 0..<25 {
            let run = try imagetable("verify", table.path)
            statuses[run.status, default: 0] += 1
            if run.status != 0 && firstFailure.isEmpty { firstFailure = run.stderr + run.stdout }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        writer.close()
        #expect(statuses == [0: 25], "\(statuses): \(firstFailure)")
        #expect(rewrites.load(ordering: .relaxed) > 100, "the writer must have run throughout")
        #expect(try imagetable("verify", table.path).stdout == "\(table.path): ok, 4 entries verified\n")
        _ = layout
    }

    @Test func repairClearsWhatIsDamagedAndExitsTwo() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        try flipByte(in: table.path, at: layout.slotOffset(1) + layout.bytesPerRow * 3 + 17)
        try interrupt(3, in: table.path, layout: layout)
        #expect(try imagetable("verify", table.path).status == 1)

        let repair = try imagetable("verify", "--repair", table.path, "--format", "json")
        #expect(repair.status == 2)
        let doc = try #require(try JSONSerialization.jsonObject(with: repair.output) as? [String: Any])
        let t = try #require((doc["tables"] as? [[String: Any]])?.first)
        #expect(t["state"] as? String == "repaired" && t["cleared"] as? Int == 2 && t["validEntries"] as? Int == 2)
        #expect((t["problems"] as? [[String: Any]])?.compactMap { $0["slot"] as? Int } == [1, 3])

        let after = try imagetable("verify", "--repair", table.path)
        #expect(after.status == 0 && after.stdout == "\(table.path): ok, 2 entries verified\n")
        let reader = try ImageTableReader(path: table.path)
        #expect(reader.entries().map(\.key) == ["a.jpg", "c.jpg"])
    }

    @Test func repairWaitsForTheWriterThenGivesUp() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        try flipByte(in: table.path, at: layout.slotOffset(0) + 3)
        let writer = try ImageTableWriter(path: table.path, format: table.descriptor, options: .init(durability: .processCrashOnly))
        defer { writer.close() }
        let run = try imagetable("verify", "--repair", "--lock-timeout", "0", table.path)
        #expect(run.status == 1)
        #expect(run.stderr.contains("[pixel-checksum-mismatch]") && run.stderr.contains("[locked]"))
        #expect(try imagetable("verify", "--repair", "--lock-timeout", "-1", table.path).status == 64)
        // Verifying alone never waits: a timeout without --repair is refused, not ignored.
        let forgotten = try imagetable("verify", "--lock-timeout", "5", table.path)
        #expect(forgotten.status == 64 && forgotten.stderr.contains("--lock-timeout applies only with --repair."), "\(forgotten.stderr)")
    }

    /// A forged second record claiming `b.jpg`'s entity (record checksum recomputed) made
    /// `extract` serve another key's image. Readers follow the hash index, which leads to the
    /// genuine record, so `b.jpg` is its own image; verify names both records.
    @Test func aForgedDuplicateRecordServesOnlyTheIndexedOne() throws {
        let scratch = try TemporaryDirectory()
        let (table, layout) = try table(scratch)
        #expect(try imagetable("extract", table.path, "b.jpg", "-o", scratch.file("genuine.png")).status == 0)
        // Record 0 ('a.jpg') rewritten to claim b.jpg: its entity UUID and key, checksum fixed up.
        try forgeRecord(in: table.path, at: layout.recordOffset(0)) { record in
            withUnsafeBytes(of: EntityKey.uuid(for: "b.jpg").uuid) { record.replaceSubrange(24..<40, with: $0) }
            let key = Array("b.jpg".utf8)
            record.replaceSubrange(96..<96 + key.count, with: key)
        }

        let extract = try imagetable("extract", table.path, "b.jpg", "-o", scratch.file("b.png"))
        #expect(extract.status == 0, "\(extract.stderr)")
        #expect(FileManager.default.contents(atPath: scratch.file("b.png")) == FileManager.default.contents(atPath: scratch.file("genuine.png")))
        let listing = try imagetable("inspect", table.path, "--format", "json")
        #expect(listing.stdout.contains("\"slot\" : 1") && !listing.stdout.contains("\"slot\" : 0,"))

        let verify = try imagetable("verify", table.path)
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("slot 0 ('b.jpg'): slot 1 also claims this entry's entity, so neither is trusted [damaged-record]"))
        #expect(verify.stderr.contains("slot 1 ('b.jpg'): slot 0 also claims this entry's entity, so neither is trusted [damaged-record]"))
    }

    /// A header whose entry count disagrees with its records is a warning (exit 2: the next
    /// bake counts again), at the header, with no slot in JSON; `--repair` counts again and
    /// clears nothing (exit 0).
    @Test func aStaleEntryCountIsAWarningThatRepairMends() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try table(scratch)
        let fd = open(table.path, O_WRONLY)
        var count = UInt64(9).littleEndian
        #expect(pwrite(fd, &count, 8, 280) == 8)  // entryCount (docs/FORMAT.md)
        close(fd)
        let run = try imagetable("verify", table.path)
        #expect(run.status == 2)
        #expect(run.stderr == "\(table.path): warning: header: the header counts 9 entries where the records hold 4, so readers "
            + "report the wrong count; the next bake counts them again [stale-entry-count]\n")
        #expect(run.stdout == "\(table.path): interrupted, a stale entry count for the next bake to correct, 4 entries verified\n")
        let json = try imagetable("verify", table.path, "--format", "json")
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let problem = try #require(((doc["tables"] as? [[String: Any]])?.first?["problems"] as? [[String: Any]])?.first)
        #expect(json.status == 2 && problem["code"] as? String == "stale-entry-count" && problem["slot"] == nil, "\(problem)")

        let repair = try imagetable("verify", "--repair", table.path)
        #expect(repair.status == 0 && repair.stdout == "\(table.path): repaired, counted the entries again, 4 entries verified\n",
                "\(repair.stdout)")
        // What the repair found, without the advice to bake, which the repair has made moot.
        #expect(repair.stderr == "\(table.path): warning: header: the header counts 9 entries where the records hold 4, so readers "
            + "report the wrong count [stale-entry-count]\n", "\(repair.stderr)")
        #expect(try imagetable("verify", table.path).status == 0)
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// `imagetable inspect`: JSON that matches what the core wrote, text for people, exit codes.
struct InspectTests {
    @Test func jsonParsesAndMatchesTheTable() throws {
        let scratch = try TemporaryDirectory()
        let rect = PixelRect(x: 1, y: 2, width: 5, height: 3)
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgr16, width: 11, height: 6, capacity: 5,
                                  keys: ["photos/a.jpg", "b.png", "ünï/cödé.jpg"], contentRects: ["b.png": rect])
        let run = try imagetable("inspect", table.path, "--format", "json")
        #expect(run.status == 0, "\(run.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(document["version"] as? Int == 1 && document["ok"] as? Bool == true)
        let tables = try #require(document["tables"] as? [[String: Any]])
        let t = try #require(tables.first)
        #expect(tables.count == 1 && t["path"] as? String == table.path && t["ok"] as? Bool == true)

        let layout = try table.descriptor.layout()
        let header = try #require(t["header"] as? [String: Any])
        #expect(header["name"] as? String == "t-16BitBGR" && header["family"] as? String == "tests")
        #expect(header["style"] as? String == "16BitBGR" && header["protection"] as? String == "none")
        let numbers: [String: Int] = ["width": 11, "height": 6, "scale": 2, "capacity": 5, "bytesPerPixel": 2, "formatVersion": 2,
                                      "bytesPerRow": layout.bytesPerRow, "imageBytes": layout.imageBytes, "slotStride": layout.slotStride,
                                      "slotsOffset": layout.slotsOffset, "pageSize": layout.pageSize, "maxFileBytes": layout.maxFileBytes]
        for (field, value) in numbers { #expect(header[field] as? Int == value, "header.\(field)") }
        let hash = table.descriptor.parametersHash.map { String(format: "%02x", $0) }.joined()
        #expect(header["parametersHash"] as? String == hash)
        let created = try #require(header["createdAt"] as? Int)
        #expect(abs(created - Int(Date().timeIntervalSince1970)) < 600)

        let size = try #require(try FileManager.default.attributesOfItem(atPath: table.path)[.size] as? Int)
        #expect(t["fileBytes"] as? Int == size && t["maxFileBytes"] as? Int == layout.maxFileBytes)
        #expect(t["entryCount"] as? Int == 3 && t["capacity"] as? Int == 5 && t["entryBytes"] as? Int == 3 * layout.slotStride)
        #expect((t["allocatedBytes"] as? Int).map { $0 > 0 } == true)
        #expect((t["notices"] as? [Any])?.isEmpty == true)

        let entries = try #require(t["entries"] as? [[String: Any]])
        #expect(entries.map { $0["key"] as? String } == ["photos/a.jpg", "b.png", "ünï/cödé.jpg"])
        let stored = try ImageTableReader(path: table.path).entries()
        for (i, (json, written)) in zip(entries, table.entries).enumerated() {
            #expect(json["slot"] as? Int == i)
            #expect(json["entityUUID"] as? String == EntityKey.uuid(for: written.key).uuidString.lowercased())
            #expect(json["sourceUUID"] as? String == written.source.uuidString.lowercased())
            #expect(json["recency"] as? Int == Int(stored[i].recency) && stored[i].recency > 0)
            #expect(json["writtenAt"] as? Int == Int(stored[i].writtenAt))
            let r = written.contentRect ?? PixelRect(x: 0, y: 0, width: 11, height: 6)
            #expect(json["contentRect"] as? [String: Int] == ["x": r.x, "y": r.y, "width": r.width, "height": r.height])
            // The checksum covers the padded rows as the table stores them.
            var padded = [UInt8](repeating: 0, count: layout.imageBytes)
            for y in 0..<6 { padded.replaceSubrange(y * layout.bytesPerRow..<(y * layout.bytesPerRow + 22), with: written.pixels[(y * 22)..<(y * 22 + 22)]) }
            #expect(json["pixelChecksum"] as? String == String(format: "%08x", CRC32.checksum(padded)))
            #expect(json["familyTag"] == nil, "written with no family tag")
        }
    }

    /// A table maps its size when full at once: under a lower limit on address space the
    /// open failed with "mmap failed: Cannot allocate memory" and no word of why.
    @Test(.disabled(if: Sanitizers.any, "a sanitizer needs terabytes of address space"))
    func anAddressSpaceLimitBelowTheTableIsNamed() throws {
        let scratch = try TemporaryDirectory()
        // 1000 slots of 1024×1024 BGRA: 4 GiB of address space.
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 1024, height: 1024, capacity: 1000, keys: ["a"])
        let run = try run("/usr/bin/prlimit", ["--as=\(2 << 30)", Products.imagetable, "inspect", table.path])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("cannot map the table: mmap failed: Cannot allocate memory; it takes 4000.3 MiB of address space")
                && run.stderr.contains("(ulimit -v), or the system's limit on mappings (vm.max_map_count) was reached [io]"), "\(run.stderr)")
    }

    @Test func textShowsTheHeaderTotalsAndOneLinePerEntry() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 150, height: 150, capacity: 100,
                                  keys: ["photos/cat.jpg", "dog.png"])
        let run = try imagetable("inspect", table.path)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == table.path)
        #expect(lines.contains("  format      t-32BitBGRA, family tests, scale 2, protection none"))
        #expect(lines.contains("  pixels      150x150 32BitBGRA, 640 bytes a row, slots of 98304 bytes (page 4096)"))
        #expect(lines.contains("  entries     2 of 100 (2%)"))
        #expect(lines.contains { $0.hasPrefix("  size        ") && $0.hasSuffix("9.4 MiB when full") })
        #expect(lines.contains { $0.hasPrefix("  slot  key") && $0.contains("entity UUID") })
        let cat = try #require(lines.first { $0.contains("photos/cat.jpg") })
        #expect(cat.hasPrefix("     0  photos/cat.jpg") && cat.contains("0,0 150x150")
                && cat.contains(EntityKey.uuid(for: "photos/cat.jpg").uuidString.lowercased()))

        let bare = try imagetable("inspect", table.path, "--no-entries")
        #expect(bare.status == 0 && !bare.stdout.contains("photos/cat.jpg") && bare.stdout.contains("2 of 100"))
    }

    @Test func sortAndLimitChooseTheEntriesListed() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["c", "a", "d", "b"])
        func keys(_ extra: String...) throws -> [String] {
            let run = try imagetable(["inspect", table.path, "--format", "json"] + extra)
            let doc = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
            let t = try #require((doc["tables"] as? [[String: Any]])?.first)
            #expect(t["entryCount"] as? Int == 4)
            return (t["entries"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        }
        #expect(try keys() == ["c", "a", "d", "b"])
        #expect(try keys("--sort", "key") == ["a", "b", "c", "d"])
        #expect(try keys("--sort", "recency", "--limit", "2") == ["b", "d"])
        let text = try imagetable("inspect", table.path, "--limit", "1")
        #expect(text.stdout.contains("  … 3 more (--limit)"))
        // `--limit 0` printed a column header over no rows, then "… 4 more".
        let none = try imagetable("inspect", table.path, "--limit", "0")
        #expect(none.stdout.hasSuffix("\n\n  4 entries not listed (--limit)\n") && !none.stdout.contains("slot  key"), "\(none.stdout)")
        let run = try imagetable("inspect", table.path, "--format", "json", "--no-entries")
        let doc = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect((doc["tables"] as? [[String: Any]])?.first?["entries"] == nil)
    }

    @Test func hostileKeysAreEscapedInText() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["evil\n\u{1B}[31mred\u{202E}.jpg"])
        let run = try imagetable("inspect", table.path)
        #expect(run.stdout.contains("evil\\n\\u{1B}[31mred\\u{202E}.jpg"))
        #expect(!run.stdout.contains("\u{1B}") && !run.stdout.contains("\u{202E}"))
    }

    @Test func damagedRecordsAreSkippedWithAWarning() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["a", "b"])
        try flipByte(in: table.path, at: try table.descriptor.layout().recordOffset(0) + 30)
        let text = try imagetable("inspect", table.path)
        #expect(text.status == 0 && text.stdout.contains("  entries     1 of 8 (12%)") && !text.stdout.contains("     0  a"))
        #expect(text.stderr == "\(table.path): warning: slot 0: record checksum mismatch; skipped it [damaged-record]\n")
        let json = try imagetable("inspect", table.path, "--format", "json")
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let notices = try #require((doc["tables"] as? [[String: Any]])?.first?["notices"] as? [[String: Any]])
        #expect(notices.count == 1 && notices[0]["kind"] as? String == "damaged-record" && notices[0]["slot"] as? Int == 0)
    }

    /// `--no-entries` reads the header alone, whatever the index holds: the count is the one the
    /// header keeps, and damage in the records is neither read nor reported (a listing reports it).
    @Test func noEntriesReadsNoRecord() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, capacity: 2_000_000, keys: ["a", "b", "c"])
        let layout = try table.descriptor.layout()
        for slot in 0..<3 { try flipByte(in: table.path, at: layout.recordOffset(slot) + 30) }
        let brief = try imagetable("inspect", table.path, "--no-entries")
        #expect(brief.status == 0 && brief.stderr.isEmpty, "\(brief.stderr)")
        #expect(brief.stdout.contains("  entries     3 of 2000000 (0%)"), "\(brief.stdout)")
        let listed = try imagetable("inspect", table.path)
        #expect(listed.stdout.contains("  entries     0 of 2000000 (0%)"))
        #expect(listed.stderr.split(separator: "\n").count == 3 && listed.stderr.contains("[damaged-record]"))
    }

    @Test func unreadableTablesAreErrorsWithExitOneAndTheOthersAreStillShown() throws {
        let scratch = try TemporaryDirectory()
        let good = try TestTable(at: scratch.file("good.imagetable"), style: .bgr32, keys: ["k"])
        try Data("hello, not a table".utf8).write(to: URL(fileURLWithPath: scratch.file("text.imagetable")))
        try Data(repeating: 0, count: 600).write(to: URL(fileURLWithPath: scratch.file("zeros.imagetable")))
        let loose = try TestTable(at: scratch.file("loose.imagetable"), style: .bgr32, keys: ["k"])
        chmod(loose.path, 0o666)
        let run = try imagetable("inspect", scratch.file("missing.imagetable"), scratch.path, scratch.file("text.imagetable"),
                                 scratch.file("zeros.imagetable"), loose.path, good.path)
        #expect(run.status == 1)
        let errors = run.stderr.split(separator: "\n").map(String.init)
        #expect(errors == [
            "\(scratch.file("missing.imagetable")): error: no such file [not-found]",
            "\(scratch.path): error: is a directory, not an image table [is-a-directory]",
            "\(scratch.file("text.imagetable")): error: file is 18 bytes, shorter than a table header (512) [not-a-table]",
            "\(scratch.file("zeros.imagetable")): error: not an image table (bad magic bytes) [not-a-table]",
            "\(loose.path): error: permissions 0666 are group- or other-writable; run chmod go-w on it [insecure-file]",
        ])
        #expect(run.stdout.hasPrefix(good.path + "\n"))

        let json = try imagetable("inspect", scratch.file("missing.imagetable"), good.path, "--format", "json")
        #expect(json.status == 1)
        let doc = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let tables = try #require(doc["tables"] as? [[String: Any]])
        #expect(doc["ok"] as? Bool == false && tables.count == 2)
        #expect(tables[0]["ok"] as? Bool == false && tables[0]["header"] == nil)
        #expect(tables[0]["error"] as? [String: String] == ["code": "not-found", "message": "no such file",
                                                             "path": scratch.file("missing.imagetable")])
        #expect(tables[1]["ok"] as? Bool == true && tables[1]["error"] == nil)
    }

    @Test(.enabled(if: geteuid() != 0, "root reads every file"))
    func anUnreadableFileIsPermissionDenied() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgr32, keys: ["k"])
        chmod(table.path, 0o200)
        let run = try imagetable("inspect", table.path)
        #expect(run.status == 1 && run.stderr == "\(table.path): error: permission denied: this user cannot read the file [permission-denied]\n")
    }

    @Test func badUsageExits64() throws {
        #expect(try imagetable("inspect").status == 64)
        #expect(try imagetable("inspect", "t", "--format", "yaml").status == 64)
        #expect(try imagetable("inspect", "t", "--limit", "-1").status == 64)
        #expect(try imagetable("inspect", "t", "--sort", "size").status == 64)
        // --no-entries lists none: a --sort or --limit beside it was dropped without a word.
        for option in [["--sort", "key"], ["--limit", "2"]] {
            let run = try imagetable(["inspect", "t", "--no-entries"] + option)
            #expect(run.status == 64 && run.stderr.hasPrefix("Error: \(option[0]) orders or limits the entries listed, and --no-entries lists none."),
                    "\(run.stderr)")
        }
    }
}

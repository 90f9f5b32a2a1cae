import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Tables of format version 1, which had no hash index: every reader still reads them (the spec's
/// Python reader included), and the first writer to open one rewrites it as version 2, keeping
/// every entry.
struct VersionOneTests {
    /// Writes a version 1 table byte by byte, as the version 1 writer left them: the whole index
    /// allocated, records in slots 0, 1, 2…, one slot left empty after the first entry.
    static func writeVersionOne(_ path: String, _ format: TableFormat, keys: [String], sources: [String: UUID]) throws {
        let layout = try TableLayout(width: format.width, height: format.height, style: format.style, capacity: format.capacity,
                                     pageSize: 4096, version: 1)
        let header = TableHeader(layout: layout, name: format.name, family: format.family, protection: format.protection,
                                 scale: format.scale, parametersHash: format.parametersHash, createdAt: 1_700_000_000)
        let slots = keys.indices.map { $0 == 0 ? 0 : $0 + 1 }
        var bytes = [UInt8](repeating: 0, count: layout.slotOffset((slots.last ?? 0) + 1))
        bytes.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            header.encode(into: base)
            base.storeLE(UInt64(keys.count), at: TableHeader.clockOffset)
            for (i, key) in keys.enumerated() {
                let pixels = pattern(for: key, layout: layout, bytesPerRow: layout.bytesPerRow)
                let slot = base + layout.slotOffset(slots[i])
                slot.copyMemory(from: pixels, byteCount: pixels.count)
                let record = IndexRecord(base: base + layout.recordOffset(slots[i]))
                record.writeFields(entity: EntityKey.uuid(for: key), source: sources[key]!, key: key,
                                   pixelChecksum: CRC32.checksum(UnsafeRawBufferPointer(start: slot, count: layout.imageBytes)),
                                   rect: PixelRect(x: 0, y: 0, width: layout.width, height: layout.height), writtenAt: 1_700_000_001)
                record.setRecency(UInt64(i + 1))
                record.setCommitted()
                base.storeLE(UInt64(2), at: layout.recordOffset(slots[i]))
            }
        }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o644]))
    }

    static let format = descriptor("old", width: 9, height: 4, style: .bgr16, capacity: 6)
    static let keys = ["a.jpg", "dir/b.png", "ünï.gif"]

    @Test func readersReadVersionOne() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("old.imagetable")
        let sources = Dictionary(uniqueKeysWithValues: Self.keys.map { ($0, UUID()) })
        try Self.writeVersionOne(path, Self.format, keys: Self.keys, sources: sources)
        let reader = try ImageTableReader(path: path)
        #expect(reader.header.formatVersion == 1 && reader.count == 3 && reader.notices.isEmpty)
        #expect(reader.entries().map(\.key) == Self.keys && reader.entries().map(\.slot) == [0, 2, 3])
        for key in Self.keys {
            #expect(try reader.withImage(forKey: key, sourceUUID: sources[key]) { rows(of: $0) } == pattern(for: key, layout: reader.layout))
        }
        #expect(TableVerifier.verify(path: path).isValid && TableVerifier.verify(path: path).validEntries == 3)

        try SpecReaderTests.readerSource().write(toFile: dir.file("spec_reader.py"), atomically: true, encoding: .utf8)
        try SpecReaderTests.driver.write(toFile: dir.file("driver.py"), atomically: true, encoding: .utf8)
        let python = try run("/usr/bin/env", ["python3", dir.file("driver.py"), dir.path, path])
        #expect(python.status == 0, "\(python.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(python.stdout.utf8)) as? [String: Any])
        let entries = try #require(json["entries"] as? [String: [String: Any]])
        #expect(Set(entries.keys) == Set(Self.keys))
        #expect(entries["dir/b.png"]?["source"] as? String == sources["dir/b.png"]!.uuidString.lowercased())
    }

    @Test func theFirstWriterUpgradesToVersionTwoKeepingEveryEntry() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("old.imagetable")
        let sources = Dictionary(uniqueKeysWithValues: Self.keys.map { ($0, UUID()) })
        try Self.writeVersionOne(path, Self.format, keys: Self.keys, sources: sources)
        let oldReader = try ImageTableReader(path: path)

        let writer = try openTable(path, Self.format)
        #expect(writer.notices.map(\.message) == ["upgraded from format version 1 to 2, keeping 3 entries"])
        #expect(writer.header.formatVersion == 2 && writer.count == 3)
        #expect(writer.entries().map(\.key) == Self.keys && writer.entries().map(\.slot) == [0, 1, 2])
        #expect(writer.entries().map(\.recency) == [1, 2, 3] && writer.entries().allSatisfy { $0.writtenAt == 1_700_000_001 })
        try put(writer, "new.jpg")
        writer.close()
        // A reader that had the version 1 file mapped keeps reading it: the upgrade renamed a new file over it.
        #expect(oldReader.header.formatVersion == 1 && oldReader.entries().count == 3)

        let reader = try ImageTableReader(path: path)
        #expect(reader.header.formatVersion == 2 && reader.count == 4 && reader.header.createdAt == 1_700_000_000)
        for key in Self.keys + ["new.jpg"] {
            #expect(try reader.withImage(forKey: key) { rows(of: $0) } == pattern(for: key, layout: reader.layout), "\(key)")
        }
        #expect(reader.entry(forKey: "a.jpg")?.sourceUUID == sources["a.jpg"])
        #expect(TableVerifier.verify(path: path).isValid)
        // Opened again, nothing more happens.
        #expect(try openTable(path, Self.format).notices.isEmpty)
    }

    /// A version 1 table whose mode was loosened: the upgrade reads it, and the notice that its
    /// mode was set back is kept (the upgraded file, made anew, was opened without it).
    @Test func aLoosenedVersionOneTableIsUpgradedAndSaidToBeTightened() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("old.imagetable")
        let format = descriptor(protection: .complete)
        try Self.writeVersionOne(path, format, keys: Self.keys, sources: Dictionary(uniqueKeysWithValues: Self.keys.map { ($0, UUID()) }))
        chmod(path, 0o644)
        let writer = try openTable(path, format)
        #expect(writer.notices.map(\.kind) == [.tightenedPermissions, .upgraded], "\(writer.notices)")
        var st = stat()
        stat(path, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        writer.close()
    }

    /// The tables committed as seeds of the table fuzzer are version 1; they still open.
    @Test func theFuzzSeedsStillOpen() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus/tables").standardized.path
        let names = try FileManager.default.contentsOfDirectory(atPath: seeds).filter { $0.hasSuffix(".imagetable") }
        #expect(names.count == 4)
        for name in names {
            let reader = try ImageTableReader(path: seeds + "/" + name)
            #expect(reader.header.formatVersion == 1)
            #expect(TableVerifier.verify(path: seeds + "/" + name).isValid, "\(name)")
        }
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// Hostile and damaged files: every single-byte flip and every truncation of a small valid table
/// must either fail to open with a typed error, or open and serve only the committed pixels, with
/// any entry it cannot serve reported (an open notice or a `TableVerifier` problem). Never a crash.
struct CorruptionTests {
    struct Fixture {
        let dir: TemporaryDirectory
        let path: String
        let pristine: [UInt8]
        let expected: [String: [UInt8]]
    }

    /// Two committed entries filling a 2-slot 5×3 `16BitBGR` table: 12 KiB, every region represented.
    static func makeFixture() throws -> Fixture {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let d = descriptor(width: 5, height: 3, style: .bgr16, capacity: 2)
        var expected: [String: [UInt8]] = [:]
        do {
            let table = try openTable(path, d)
            for key in ["alpha", "beta"] {
                try put(table, key)
                expected[key] = pattern(for: key, layout: table.layout)
            }
        }
        let pristine = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        return Fixture(dir: dir, path: path, pristine: pristine, expected: expected)
    }

    /// Checks one damaged file; returns a description of any silent corruption.
    static func check(_ f: Fixture) -> String? {
        let reader: ImageTableReader
        do {
            reader = try ImageTableReader(path: f.path)
        } catch {
            return nil  // a typed error: the damage was found at open
        }
        // The verifier only runs when the reader's answer needs explaining: it is the slow part.
        var verified: Bool?
        func damageReported() -> Bool {
            if !reader.notices.isEmpty { return true }
            if verified == nil { verified = TableVerifier.verify(path: f.path).isValid }
            return verified == false
        }
        for (key, pixels) in f.expected {
            let served = try? reader.withImage(forKey: key) { rows(of: $0) }
            if served == nil && !damageReported() { return "\(key) vanished without a notice" }
            if let served, served != pixels, !damageReported() { return "\(key) served wrong pixels silently" }
        }
        for info in reader.entries() where f.expected[info.key] == nil && !damageReported() {
            return "unknown entry \(info.key) served silently"
        }
        return nil
    }

    static func write(_ bytes: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    @Test func everySingleByteFlipIsHandled() throws {
        let f = try Self.makeFixture()
        #expect(f.pristine.count == 12288 && Self.check(f) == nil)
        var failures: [String] = []
        let fd = open(f.path, O_WRONLY)
        defer { close(fd) }
        for offset in 0..<f.pristine.count {
            for mask: UInt8 in [0xFF, 0x01] {
                var byte = f.pristine[offset] ^ mask
                _ = pwrite(fd, &byte, 1, off_t(offset))
                if let problem = Self.check(f) { failures.append("offset \(offset) ^ \(mask): \(problem)") }
                byte = f.pristine[offset]
                _ = pwrite(fd, &byte, 1, off_t(offset))
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    @Test func everyTruncationIsHandled() throws {
        let f = try Self.makeFixture()
        var failures: [String] = []
        for length in 0..<f.pristine.count {
            _ = truncate(f.path, off_t(length))
            if let problem = Self.check(f) { failures.append("length \(length): \(problem)") }
            Self.write(f.pristine, to: f.path)
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// A writer repairs what it can (dropping damaged records) or rebuilds; it never crashes, and
    /// what survives is exact.
    @Test func writersRepairFlippedIndexBytes() throws {
        let f = try Self.makeFixture()
        let d = descriptor(width: 5, height: 3, style: .bgr16, capacity: 2)
        var failures: [String] = []
        var opened = 0, recordsRepaired = 0
        for offset in 0..<(512 + 2 * 256) {
            var damaged = f.pristine
            damaged[offset] ^= 0xFF
            Self.write(damaged, to: f.path)
            // A damaged header may be refused, with a typed error; whatever opens must then work.
            let table: ImageTableWriter
            do {
                table = try openTable(f.path, d)
            } catch is ImageTableError {
                continue
            } catch {
                failures.append("offset \(offset): untyped \(error)")
                continue
            }
            opened += 1
            do {
                for info in table.entries() {
                    let pixels = try table.withImage(forKey: info.key) { rows(of: $0) }
                    if pixels != f.expected[info.key] { failures.append("offset \(offset): \(info.key) wrong after repair") }
                }
                // The repaired table accepts new writes (evicting if need be).
                try put(table, "gamma")
                #expect(try table.withImage(forKey: "gamma") { _ in true } == true)
                if offset >= 512 { recordsRepaired += 1 }
            } catch {
                failures.append("offset \(offset): after the open, \(error)")
            }
            table.close()
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        // Every byte of the two records was repaired, never refused; the header's mostly too.
        #expect(recordsRepaired == 2 * 256)
        #expect(opened > 2 * 256, "\(opened) of \(512 + 2 * 256) damaged tables opened")
    }

    @Test func absurdHeaderValuesAreRejectedNotTrusted() throws {
        let f = try Self.makeFixture()
        // Consistent-looking but huge: capacity and size at their limits with a valid checksum.
        var bytes = f.pristine
        bytes.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!
            base.storeLE(UInt32(16384), at: 24)
            base.storeLE(UInt32(0xFFFF_FFFF), at: 48)
            base.storeLE(CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<252])), at: 252)
        }
        Self.write(bytes, to: f.path)
        let error = #expect(throws: ImageTableError.self) { try ImageTableReader(path: f.path) }
        #expect(error?.code == .corrupt)
    }
}

/// What readers list and verifiers report for a damaged record.
struct DamagedRecordReportingTests {
    @Test func readersListOnlySoundEntriesAndVerifiersGiveCodes() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, descriptor(capacity: 3))
            for key in ["a", "b"] { try put(table, key) }
        }
        // Damage record 1's key bytes: its checksum no longer holds.
        let fd = open(path, O_RDWR)
        var byte: UInt8 = 0x7A
        _ = pwrite(fd, &byte, 1, off_t(512 + 256 + 100))
        close(fd)
        let reader = try ImageTableReader(path: path)
        #expect(reader.entries().map(\.key) == ["a"])
        #expect(reader.notices.map(\.message) == ["slot 1: record checksum mismatch; skipped it"])
        #expect(reader.notices.map(\.finding) == ["record checksum mismatch"] && reader.notices.map(\.key) == [nil])
        let report = TableVerifier.verify(path: path)
        #expect(report.problems.map(\.code) == [.damagedRecord] && report.problems.first?.reason == "record checksum mismatch")
        #expect(report.problems.first?.description == "slot 1 (b): record checksum mismatch [damaged-record]")
    }
}

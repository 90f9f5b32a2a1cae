import Foundation
import TestSupport
import Testing
@testable import ImageTableCore
#if canImport(Glibc)
import Glibc
#endif

/// `TableVerifier` takes the readers' seqlock care: a table that a writer is rewriting is not
/// damaged, a write that a killed writer left is "interrupted" rather than damage, and real
/// damage is still found.
@Suite(.serialized)
struct LiveVerifyTests {
    /// Another process rewrites the entries as fast as it can while the verifier runs again and
    /// again: no run may report a problem. Before the verifier read records under their seqlock,
    /// nearly every run reported an `interrupted-write` or a `pixel-checksum-mismatch`.
    @Test func verifyingWhileAWriterRewritesFindsNoDamage() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: Products.fixture)
        writer.arguments = ["rewriter", path, "2"]
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        var runs = 0, inProgress = 0
        var bad: [String] = []
        while writer.isRunning {
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let report = TableVerifier.verify(path: path)
            runs += 1
            inProgress += report.inProgress
            if !report.isValid { bad.append(report.problems.map(\.description).joined(separator: "; ")) }
        }
        writer.waitUntilExit()
        let rewrites = Int(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(bad.isEmpty, "\(bad.count) of \(runs) runs reported damage, first: \(bad.first ?? "")")
        #expect(runs > 20 && rewrites > 1000, "runs \(runs), rewrites \(rewrites): the two must overlap a lot")
        // Once the writer is gone, the table verifies whole.
        let after = TableVerifier.verify(path: path)
        #expect(after.isValid && after.inProgress == 0 && after.validEntries == 4, "\(after.problems)")
    }

    /// A reservation is an odd generation for as long as the writer renders. While the writer
    /// holds the lock, that is a write in progress: no problem, counted in `inProgress`.
    @Test func aReservationUnderAHeldLockIsInProgress() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor())
        try put(table, "a")
        try put(table, "b")
        let reservation = try table.reserve(key: "a", sourceUUID: UUID())
        let report = TableVerifier.verify(path: path)
        #expect(report.isValid && report.verdict == .sound, "\(report.problems)")
        #expect(report.inProgress == 1 && report.validEntries == 1)
        table.abandon(reservation)
        table.close()
    }

    /// The same odd generation with no writer alive is what a kill leaves: `interrupted`, not
    /// `damaged`, and the next writer clears it.
    @Test func anOddGenerationWithNoWriterIsAnInterruptedWrite() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        do {
            let table = try openTable(path, descriptor())
            for key in ["a", "b", "c"] { try put(table, key) }
        }
        try Self.setGeneration(of: 1, in: path) { $0 | 1 }
        // A process another test spawns at this moment holds a copy of every descriptor until it
        // execs, the closed writer's lock among them, and verify then rightly sees a writer: look
        // again until that copy is gone.
        var report = TableVerifier.verify(path: path)
        for _ in 0..<50 where report.inProgress > 0 {
            usleep(20_000)
            report = TableVerifier.verify(path: path)
        }
        #expect(report.verdict == .interrupted && report.validEntries == 2)
        #expect(report.problems.map(\.code) == [.interruptedWrite] && report.problems.first?.slot == 1)

        // Real damage besides makes the verdict `damaged`.
        try Self.flipPixel(slot: 2, in: path)
        #expect(TableVerifier.verify(path: path).verdict == .damaged)

        let table = try openTable(path, descriptor())
        #expect(table.count == 2)
        table.close()
    }

    /// Stores a new generation for `slot`'s record, as a killed writer leaves it.
    static func setGeneration(of slot: Int, in path: String, _ change: (UInt64) -> UInt64) throws {
        let file = try TableFile(path: path, writable: true)
        var value = change(file.record(slot).generation).littleEndian
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        #expect(pwrite(fd, &value, 8, off_t(file.layout.recordOffset(slot))) == 8)
    }

    /// Flips one bit of the first byte of `slot`'s pixels.
    static func flipPixel(slot: Int, in path: String) throws {
        let file = try TableFile(path: path, writable: true)
        file.slot(slot).storeBytes(of: file.slot(slot).load(as: UInt8.self) ^ 1, as: UInt8.self)
    }
}

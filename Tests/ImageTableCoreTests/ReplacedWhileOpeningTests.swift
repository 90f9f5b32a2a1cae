import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// A table is replaced by renaming a new file over it (a rebuild with new parameters, an
/// upgrade). A reader that opens the path at that instant may open the old file just before it
/// loses its name: it opens the path again, which names the new table, rather than refusing a
/// file with no link as insecure (`insecure-file`, "0 hard links", which a test saw under load).
struct ReplacedWhileOpeningTests {
    @Test func readersOpeningWhileTheTableIsRenamedOverItOpenATable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let writer = try openTable(path, descriptor(capacity: 4))
        try put(writer, "k")
        writer.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let stop = AdaptiveMutex(false), renames = AdaptiveMutex(0), stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var i = 0
            while !stop.withLock({ $0 }) {
                let temp = dir.file("new-\(i % 2)")
                let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
                if rename(temp, path) == 0 { renames.withLock { $0 += 1 } }
                i += 1
                // A replacement every 50 µs or so: far more often than any writer replaces a
                // table, and often enough that many opens race one.
                usleep(20)
            }
            stopped.signal()
        }
        var opened = 0, refused: [String] = []
        for _ in 0..<3000 {
            do {
                let reader = try ImageTableReader(path: path)
                opened += reader.count
            } catch {
                refused.append(error.description)
            }
        }
        stop.withLock { $0 = true }
        stopped.wait()
        #expect(renames.withLock { $0 } > 100, "the table was replaced while it was opened")
        #expect(refused.isEmpty, "\(refused.count) opens refused, first: \(refused.prefix(2))")
        #expect(opened == 3000 - refused.count)
    }
}

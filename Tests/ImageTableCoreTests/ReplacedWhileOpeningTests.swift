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
        // Until both sides have done enough, whatever the machine's load: a starved renamer
        // would otherwise make the test vacuous.
        var opens = 0, opened = 0, refused: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while (opens < 3000 || renames.withLock({ $0 }) < 200) && Date() < deadline {
            opens += 1
            do {
                let reader = try ImageTableReader(path: path)
                opened += reader.count
            } catch {
                refused.append(error.description)
            }
        }
        stop.withLock { $0 = true }
        stopped.wait()
        #expect(renames.withLock { $0 } >= 200 && opens >= 3000, "the table was replaced while it was opened")
        #expect(refused.isEmpty, "\(refused.count) of \(opens) opens refused, first: \(refused.prefix(2))")
        #expect(opened == opens - refused.count)
    }
}

import Foundation
import ImageTableCore

/// `imagetable-bench soak-reader DIR SECONDS`: the reader of `make soak`. For SECONDS it opens
/// the tables in DIR and reads random entries through the checked read (`withImage`), while
/// bakes write them. Rendering is deterministic, so within one table every read of one source
/// UUID must give the same pixels: a second checksum for a (table, source) pair is a torn or
/// wrong read. Prints one line: `reads N consistent N busy N torn N`.
enum SoakReader {
    static func run(directory: String, seconds: Double) {
        var seen: [String: UInt32] = [:]
        var reads = 0, consistent = 0, busy = 0, torn = 0
        var readers: [String: ImageTableReader] = [:]
        let deadline = Date().addingTimeInterval(seconds)
        var generator = SystemRandomNumberGenerator()
        while Date() < deadline {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".imagetable") }
            guard let name = names.randomElement(using: &generator) else {
                usleep(10_000)
                continue
            }
            let path = directory + "/" + name
            // A table rebuilt by a bake is a new file: reopen now and then to follow it.
            if readers[name] == nil || Int.random(in: 0..<200, using: &generator) == 0 {
                readers[name] = try? ImageTableReader(path: path)
            }
            guard let reader = readers[name] else { continue }
            _ = reader.refreshIfChanged()
            guard let entry = reader.entries().randomElement(using: &generator) else { continue }
            reads += 1
            do {
                let read = try reader.withImage(forKey: entry.key) { view in
                    (view.sourceUUID, CRC32.checksum(view.bytes))
                }
                guard let (source, sum) = read else { continue }  // evicted or replaced meanwhile
                let pair = name + " " + source.uuidString
                if let known = seen[pair], known != sum { torn += 1 } else { consistent += 1 }
                seen[pair] = seen[pair] ?? sum
            } catch {
                busy += 1
            }
            // A reader alongside the bakes, not a load of its own on a small machine.
            usleep(1_000)
        }
        print("reads \(reads) consistent \(consistent) busy \(busy) torn \(torn)")
    }
}

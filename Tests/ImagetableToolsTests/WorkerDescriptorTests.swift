import Foundation
import ImageTableCore
import TestSupport
import Testing

/// The descriptors a command hands its worker. `imagetable extract` opens nothing before it
/// starts its worker, so its pipes used to be its first descriptors: the lifeline's read end was
/// 3, the dup2 of the request pipe onto 3 replaced it before it was copied to 5, and the worker's
/// lifeline was its own request pipe. The thread watching it then took the first byte of a
/// request and exited with status 2, now and then, under load (`worker-crashed`).
struct WorkerDescriptorTests {
    @Test func aWorkerGetsItsChannelFromDescriptorsThatAreNotItsOwnNumbers() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["k"])
        let log = scratch.file("strace.log")
        let result = try run("/usr/bin/strace", ["-f", "-qq", "-e", "trace=dup2", "-o", log, Products.imagetable,
                                                 "extract", table.path, "k", "-o", scratch.file("k.png")])
        #expect(result.status == 0, "\(result.stderr)")
        let dups = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line -> (Int, Int)? in
            guard let open = line.range(of: "dup2("), let close = line[open.upperBound...].range(of: ")") else { return nil }
            let numbers = line[open.upperBound..<close.lowerBound].split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
        }
        let channel = dups.filter { (3...6).contains($0.1) }
        #expect(Set(channel.map(\.1)).isSuperset(of: [3, 4, 5]), "\(dups)")
        #expect(channel.allSatisfy { !(3...6).contains($0.0) }, "a source descriptor is one of the fixed numbers: \(channel)")
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing

/// Every path the tools print in text output is escaped: a table, a manifest or an output file
/// whose name holds escape sequences and a line break cannot drive the terminal or forge a line.
struct TerminalEscapeTests {
    static let hostile = "t\u{1B}[2J\u{1B}]0;pwned\u{07}\nforged: error: x [corrupt]\n"
    static let escaped = "t\\u{1B}[2J\\u{1B}]0;pwned\\u{7}\\nforged: error: x [corrupt]\\n"

    private func expectClean(_ run: ProcessResult, lines: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let bytes = Array(run.stderr.utf8) + Array(run.output)
        #expect(!bytes.contains(0x1B) && !bytes.contains(0x07), "\(run.stderr)\(run.stdout)", sourceLocation: sourceLocation)
        let count = (run.stdout + run.stderr).split(separator: "\n").count
        #expect(count == lines, "\(run.stdout)\(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test func tablePathsAreEscapedByVerifyInspectAndExtract() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.file(Self.hostile)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let table = try TestTable(at: directory + "/a.imagetable", style: .bgra32, width: 8, height: 8, keys: ["k"])
        let layout = try table.descriptor.layout()
        try flipByte(in: table.path, at: layout.slotOffset(0))

        let verify = try imagetable("verify", table.path)
        #expect(verify.status == 1)
        expectClean(verify, lines: 2)
        #expect(verify.stdout == scratch.file(Self.escaped) + "/a.imagetable: 1 problem, 0 entries verified\n")

        let inspect = try imagetable("inspect", table.path, "--no-entries")
        expectClean(inspect, lines: 7)
        #expect(inspect.stdout.hasPrefix(scratch.file(Self.escaped) + "/a.imagetable\n"))

        let extract = try imagetable("extract", table.path, "k", "-o", directory + "/k.png")
        #expect(extract.status == 0, "\(extract.stderr)")
        expectClean(extract, lines: 2)  // the checksum warning and the file written
        #expect(extract.stdout.hasPrefix(scratch.file(Self.escaped) + "/k.png: "))
    }

    @Test func manifestPathsAreEscapedByValidate() throws {
        let scratch = try TemporaryDirectory()
        let manifest = scratch.file(Self.hostile + ".yaml")
        try "version: 1\noutput: tables\nfamilies: {}\nbogus: 1\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let run = try imagetable("validate", manifest)
        #expect(run.status == 1)
        expectClean(run, lines: 7)  // two diagnostics, each with its line and caret, and the status
        #expect(run.stdout.hasPrefix(scratch.file(Self.escaped) + ".yaml:3:11: error: "))
    }
}

import Foundation
import TestSupport
import Testing

/// Arguments that are not UTF-8 are refused as bad usage (64), where Swift's decoding of the
/// command line turned their bytes into U+FFFD: an output landed at another path than the one
/// named, with exit 0, and an input that exists was reported missing.
struct ArgumentBytesTests {
    /// Runs `imagetable` through the shell, so that `printf` can make a byte no Swift string holds.
    private func shell(_ script: String, in directory: String) throws -> ProcessResult {
        try run("/bin/sh", ["-c", script], in: directory, environment: ["IMAGETABLE": Products.imagetable])
    }

    @Test func aPathThatIsNotUTF8IsBadUsage() throws {
        let scratch = try TemporaryDirectory()
        _ = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["k"])
        // An existing input: it was "no such file".
        #expect(FileManager.default.createFile(atPath: scratch.file("x"), contents: nil))
        let input = try shell("cp x \"$(printf 't\\377.imagetable')\" && \"$IMAGETABLE\" inspect \"$(printf 't\\377.imagetable')\"",
                              in: scratch.path)
        #expect(input.status == 64 && input.stdout.isEmpty, "\(input.stdout)")
        #expect(input.stderr == "imagetable: error: argument 2 is not valid UTF-8: 't\\xFF.imagetable'; imagetable takes paths and keys in UTF-8\n")
        // An output: it wrote `o\u{FFFD}.png` and exited 0.
        let output = try shell("\"$IMAGETABLE\" extract t.imagetable k -o \"$(printf 'o\\377.png')\"", in: scratch.path)
        #expect(output.status == 64, "\(output.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).allSatisfy { !$0.hasPrefix("o") })
    }
}

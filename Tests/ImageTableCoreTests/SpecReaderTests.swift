import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// Runs the Python reader printed in docs/FORMAT.md against tables written by the Swift code.
/// If the spec and the code disagree on any byte, this fails.
struct SpecReaderTests {
    /// The reader's source, cut from between the spec's `python-reader` markers.
    static func readerSource() throws -> String {
        let spec = try String(contentsOfFile: LayoutTests.specPath, encoding: .utf8)
        let start = try #require(spec.range(of: "<!-- python-reader:begin -->\n```python\n"))
        let end = try #require(spec.range(of: "```\n<!-- python-reader:end -->"))
        return String(spec[start.upperBound..<end.lowerBound])
    }

    static let driver = """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from spec_reader import read_table
    header, entries = read_table(sys.argv[2])
    print(json.dumps({"header": header, "entries": {k: {"entity": str(e), "source": str(s), "rect": list(r),
          "pixels": b"".join(rows).hex()} for k, (e, s, r, rows) in entries.items()}}))
    """

    @Test(arguments: PixelStyle.allCases)
    func thePythonReaderInTheSpecReadsWhatSwiftWrites(style: PixelStyle) throws {
        let dir = try TemporaryDirectory()
        try Self.readerSource().write(toFile: dir.file("spec_reader.py"), atomically: true, encoding: .utf8)
        try Self.driver.write(toFile: dir.file("driver.py"), atomically: true, encoding: .utf8)
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor("spec-\(style.rawValue)", width: 13, height: 6, style: style, capacity: 5))
        var sources: [String: UUID] = [:]
        for key in ["a.png", "dir/b.jpg", "ünï/😀", ""] {
            sources[key] = UUID()
            try put(table, key, source: sources[key]!)
        }
        try table.write(key: "inside", sourceUUID: UUID()) { $0.contentRect = PixelRect(x: 2, y: 0, width: 9, height: 6) }
        try table.delete(key: "a.png")
        sources["a.png"] = nil
        table.close()

        let result = try run("/usr/bin/env", ["python3", dir.file("driver.py"), dir.path, path])
        let (status, output) = (result.status, result.stdout)
        #expect(status == 0, "python reader failed")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let header = try #require(json["header"] as? [String: Any])
        #expect(header["style"] as? String == style.rawValue)
        #expect(header["width"] as? Int == 13 && header["height"] as? Int == 6)
        #expect(header["bytes_per_row"] as? Int == table.layout.bytesPerRow)
        let entries = try #require(json["entries"] as? [String: [String: Any]])
        #expect(Set(entries.keys) == Set(sources.keys).union(["inside"]))
        for (key, source) in sources {
            let e = try #require(entries[key])
            #expect(e["entity"] as? String == EntityKey.uuid(for: key).uuidString.lowercased())
            #expect(e["source"] as? String == source.uuidString.lowercased())
            #expect(e["rect"] as? [Int] == [0, 0, 13, 6])
            let expected = pattern(for: key, layout: table.layout).map { String(format: "%02x", $0) }.joined()
            #expect(e["pixels"] as? String == expected, "\(key)")
        }
        #expect(entries["inside"]?["rect"] as? [Int] == [2, 0, 9, 6])
    }

    @Test func thePythonReaderRejectsADamagedPixel() throws {
        let dir = try TemporaryDirectory()
        try Self.readerSource().write(toFile: dir.file("spec_reader.py"), atomically: true, encoding: .utf8)
        try Self.driver.write(toFile: dir.file("driver.py"), atomically: true, encoding: .utf8)
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor())
        try put(table, "k")
        let slot = table.file.slot(0)
        slot.storeBytes(of: slot.load(as: UInt8.self) ^ 1, as: UInt8.self)
        table.close()
        let status = try run("/usr/bin/env", ["python3", dir.file("driver.py"), dir.path, path]).status
        #expect(status != 0)
    }

    @Test func theSpecReaderIsShort() throws {
        // Both versions, the hash index and the RGBA conversion (FORMAT.md, "Pixel styles"), in two pages.
        #expect(try Self.readerSource().split(separator: "\n").count <= 120)
    }
}

import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// The pixel conversion in docs/FORMAT.md's Python reader gives the bytes `PixelConversion`
/// gives: unpremultiplying rounds half up, which Python's `round` (half to even) would not.
struct SpecConversionTests {
    private static let driver = """
    import sys
    sys.path.insert(0, sys.argv[1])
    import spec_reader
    if sys.argv[2] == "unpremultiply":
        print(bytes(spec_reader.unpremultiply(c, a) for a in range(256) for c in range(256)).hex())
    else:
        header, entries = spec_reader.read_table(sys.argv[3])
        for key in sorted(entries):
            print(key, b"".join(spec_reader.rgba(header["style"], row) for row in entries[key][3]).hex())
    """

    private func python(_ arguments: [String]) throws -> String {
        let dir = try TemporaryDirectory()
        try SpecReaderTests.readerSource().write(toFile: dir.file("spec_reader.py"), atomically: true, encoding: .utf8)
        try Self.driver.write(toFile: dir.file("driver.py"), atomically: true, encoding: .utf8)
        let result = try run("/usr/bin/env", ["python3", dir.file("driver.py"), dir.path] + arguments)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func unpremultiplyingAgreesOnEveryColourAndAlpha() throws {
        var swift: [UInt8] = []
        for a in 0...255 { for c in 0...255 { swift.append(PixelConversion.unpremultiply(UInt8(c), UInt8(a))) } }
        #expect(try python(["unpremultiply"]) == hex(swift))
        // Half to even gives other bytes: the comparison above can tell the two apart.
        var halfEven: [UInt8] = []
        for a in 0...255 {
            for c in 0...255 {
                halfEven.append(a == 0 ? 0 : UInt8(min(255, (Double(c * 255) / Double(a)).rounded(.toNearestOrEven))))
            }
        }
        #expect(halfEven != swift)
        #expect(zip(halfEven, swift).filter { $0 != $1 }.count > 100)
    }

    @Test(arguments: PixelStyle.allCases)
    func rowsConvertToTheRGBASwiftGives(style: PixelStyle) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.imagetable")
        let table = try openTable(path, descriptor("rgba", width: 13, height: 6, style: style, capacity: 4))
        let keys = ["a", "b", "c"]
        for key in keys { try put(table, key) }
        var expected: [String] = []
        for key in keys {
            let rgba = try #require(try table.withImage(forKey: key) { PixelConversion.rgba8($0) })
            expected.append("\(key) \(hex(rgba))")
        }
        table.close()
        #expect(try python(["rgba", path]) == expected.joined(separator: "\n"))
    }
}

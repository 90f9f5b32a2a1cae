import Foundation
import TestSupport
import Testing
@testable import ImageTableCore

/// The layout arithmetic, checked against the worked examples in docs/FORMAT.md itself, so the
/// spec and the code cannot drift apart.
struct LayoutTests {
    struct Example {
        let width: Int, height: Int, style: PixelStyle
        let bytesPerRow: Int, imageBytes: Int, slotStride: Int, capacity: Int, bucketCount: Int?, slotsOffset: Int, maxFileBytes: Int
    }

    /// Parses the rows of the first table after `heading` in docs/FORMAT.md: version 2's "Worked
    /// examples" (with `bucketCount`) or the version 1 table of "## Version 1" (without).
    static func examples(after heading: String) throws -> [Example] {
        let spec = try String(contentsOfFile: specPath, encoding: .utf8)
        let section = try #require(spec.components(separatedBy: heading).dropFirst().first?.components(separatedBy: "\n## ").first)
        return section.split(separator: "\n").compactMap { line -> Example? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 7 || cells.count == 8, let sizeAndStyle = cells.first, sizeAndStyle.contains("×") else { return nil }
            let parts = sizeAndStyle.split(separator: " ")
            let dims = parts[0].split(separator: "×").compactMap { Int($0) }
            let style = PixelStyle(rawValue: parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")))!
            let n = cells.dropFirst().map { Int($0.replacingOccurrences(of: ",", with: ""))! }
            let buckets = cells.count == 8 ? n[4] : nil
            let rest = cells.count == 8 ? Array(n[5...]) : Array(n[4...])
            return Example(width: dims[0], height: dims[1], style: style, bytesPerRow: n[0], imageBytes: n[1],
                           slotStride: n[2], capacity: n[3], bucketCount: buckets, slotsOffset: rest[0], maxFileBytes: rest[1])
        }
    }

    static var specPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/FORMAT.md").standardized.path
    }

    @Test func workedExamplesInTheSpecMatchTheCode() throws {
        let version2 = try Self.examples(after: "### Worked examples")
        let version1 = try Self.examples(after: "## Version 1")
        #expect(version2.count == 6 && version1.count == 2)
        for (version, examples) in [(2, version2), (1, version1)] {
            for e in examples {
                let l = try TableLayout(width: e.width, height: e.height, style: e.style, capacity: e.capacity, pageSize: 4096, version: version)
                #expect(l.bytesPerRow == e.bytesPerRow, "\(e.width)×\(e.height) \(e.style)")
                #expect(l.imageBytes == e.imageBytes)
                #expect(l.slotStride == e.slotStride)
                #expect(l.bucketCount == (e.bucketCount ?? 0))
                #expect(l.slotsOffset == e.slotsOffset, "\(e.width)×\(e.height) \(e.style) version \(version)")
                #expect(l.maxFileBytes == e.maxFileBytes)
            }
        }
    }

    @Test(arguments: PixelStyle.allCases)
    func rowsAndSlotsAreAligned(style: PixelStyle) throws {
        for (w, h) in [(1, 1), (3, 3), (17, 9), (63, 2), (64, 64), (150, 150), (1001, 3)] {
            let l = try TableLayout(width: w, height: h, style: style, capacity: 3, pageSize: 16384)
            #expect(l.bytesPerRow % 64 == 0 && l.bytesPerRow >= w * style.bytesPerPixel && l.bytesPerRow - w * style.bytesPerPixel < 64)
            #expect(l.slotStride % 16384 == 0 && l.slotStride >= l.imageBytes && l.slotStride - l.imageBytes < 16384)
            #expect(l.slotsOffset % 16384 == 0 && l.slotsOffset >= 512 + 3 * 256 + 2 * 8 * 8)
            #expect(l.slotOffset(2) == l.slotsOffset + 2 * l.slotStride)
            #expect(l.recordOffset(2) == 512 + 512)
        }
    }

    /// A writer writes whole pages of this machine, never the rest of a larger page a table
    /// was made with (a 1,280-byte image in a 64 KiB slot is one page written, not sixteen).
    @Test func writtenSlotBytesAreWholePagesOfThisMachine() throws {
        let page = TableLayout.systemPageSize
        for pageSize in [4096, 16384, 65536] where pageSize >= page {
            for (w, h) in [(20, 20), (150, 150), (16, 64), (1001, 3)] {
                let l = try TableLayout(width: w, height: h, style: .grayscale8, capacity: 3, pageSize: pageSize)
                let written = l.writtenSlotBytes
                #expect(written % page == 0 && written >= l.imageBytes && written - l.imageBytes < page && written <= l.slotStride,
                        "\(w)x\(h) in pages of \(pageSize): \(written) of \(l.slotStride)")
            }
        }
        let tiny = try TableLayout(width: 20, height: 20, style: .grayscale8, capacity: 3, pageSize: 65536)
        #expect(tiny.imageBytes == 1280 && tiny.slotStride == 65536 && tiny.writtenSlotBytes == page)
    }

    @Test func outOfRangeAndOverflowAreTypedErrors() {
        let cases: [(Int, Int, Int, Int)] = [(0, 1, 1, 4096), (1, 16385, 1, 4096), (1, 1, 0, 4096),
                                             (1, 1, 100_000_001, 4096), (1, 1, 1, 4095), (1, 1, 1, 6000), (1, 1, 1, 131072)]
        for (w, h, c, p) in cases {
            #expect(throws: ImageTableError.self) { try TableLayout(width: w, height: h, style: .bgra32, capacity: c, pageSize: p) }
        }
        // Version 1 stops at a million; version 2 goes a hundred times further.
        #expect(throws: ImageTableError.self) { try TableLayout(width: 1, height: 1, style: .bgra32, capacity: 1_000_001, version: 1) }
        #expect((try? TableLayout(width: 1, height: 1, style: .bgra32, capacity: 100_000_000))?.bucketCount == 1 << 28)
        // The largest legal table still fits in 64 bits and is reported, not trapped.
        let big = try? TableLayout(width: 16384, height: 16384, style: .bgra32, capacity: 100_000_000, pageSize: 65536)
        let index = 512 + 100_000_000 * 256 + 2 * (1 << 28) * 8
        #expect(big?.maxFileBytes == (index + 65535) / 65536 * 65536 + 100_000_000 * 1_073_741_824)
    }
}

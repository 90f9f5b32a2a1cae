import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// `imagetable preview`: a PNG of the documented size, tiles in key order showing the entries,
/// captions when libvips renders text, exit codes.
struct PreviewTests {
    /// Five opaque entries, each one flat colour, so a tile's pixels are known after resampling.
    private func flatTable(_ scratch: TemporaryDirectory, width: Int = 40, height: Int = 30) throws -> (TestTable, [String: [UInt8]]) {
        let colours: [String: [UInt8]] = ["a": [200, 30, 30], "b": [30, 200, 30], "c": [30, 30, 200], "d": [250, 250, 0], "e": [0, 0, 0]]
        let table = try TestTable(at: scratch.file("flat.imagetable"), style: .bgr32, width: width, height: height, capacity: 10,
                                  keys: ["e", "c", "a", "d", "b"]) { key, w, h in
            let rgb = colours[key]!
            return Array([[UInt8]](repeating: [rgb[2], rgb[1], rgb[0], 0xFF], count: w * h).joined())
        }
        return (table, colours)
    }

    @Test func withoutCaptionsTheSheetIsTheGridOfTiles() throws {
        let scratch = try TemporaryDirectory()
        let (table, colours) = try flatTable(scratch)
        let output = scratch.file("sheet.png")
        let run = try imagetable("preview", table.path, "-o", output, "--no-captions", "--columns", "2", "--tile-size", "20")
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        // Tiles 20x15 (40x30 halved); 2 columns, 3 rows, 8-pixel gaps.
        #expect(run.stdout == "\(output): 5 entries of \(table.path) in 2 columns and 3 rows, 64x77 pixels\n")
        let png = try DecodedPNG(path: output)
        #expect(png.width == 2 * 20 + 3 * 8 && png.height == 3 * 15 + 4 * 8 && png.colourType == 2 && png.bands == 3)
        #expect(png.pixel(0, 0) == [0xF2, 0xF2, 0xF2] && png.pixel(63, 76) == [0xF2, 0xF2, 0xF2])
        for (index, key) in ["a", "b", "c", "d", "e"].enumerated() {
            let x = 8 + (index % 2) * 28, y = 8 + (index / 2) * 23
            for (px, py) in [(x, y), (x + 19, y + 14), (x + 10, y + 7)] {
                let got = png.pixel(px, py), want = colours[key]!
                #expect(zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "tile \(key) at \(px),\(py): \(got)")
            }
            #expect(png.pixel(x - 1, y) == [0xF2, 0xF2, 0xF2] && png.pixel(x + 20, y + 15) == [0xF2, 0xF2, 0xF2])
        }
        // The sixth cell is empty.
        #expect(png.pixel(8 + 28 + 10, 8 + 2 * 23 + 7) == [0xF2, 0xF2, 0xF2])
    }

    /// A reader that stops early (`preview -o - | head -c 8`) ends the command as it ends `cat`:
    /// killed by SIGPIPE (141 in the shell), silently. The worker, which writes the PNG to the
    /// standard output it shares, died of SIGPIPE and was reported as a crash (exit 1).
    @Test func aReaderThatStopsEarlyEndsItQuietly() throws {
        let scratch = try TemporaryDirectory()
        var seed: UInt64 = 5
        let table = try TestTable(at: scratch.file("noise.imagetable"), style: .bgr32, width: 120, height: 120, capacity: 16,
                                  keys: (0..<16).map { "k\($0)" }) { _, w, h in
            (0..<(w * h * 4)).map { _ in
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: seed >> 33)
            }
        }
        // Noise does not compress: the sheet is far larger than a pipe's buffer.
        let result = try run("/bin/bash", ["-c", "'\(Products.imagetable)' preview --no-captions '\(table.path)' -o - | head -c 8 > /dev/null; "
                                           + "echo \"status ${PIPESTATUS[0]}\""])
        #expect(result.stdout == "status 141\n" && result.stderr.isEmpty, "\(result.stdout) \(result.stderr)")
    }

    @Test func withCaptionsCellsMakeRoomForTheKeysAndTheTitle() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try flatTable(scratch)
        let output = scratch.file("sheet.png")
        let run = try imagetable("preview", table.path, "-o", output)
        #expect(run.status == 0, "\(run.stderr)")
        // Tiles stay 40x30 (under --tile-size 160); cells 96 wide and 30 + 20 high; about
        // square: 3 columns, 2 rows; a 28-pixel title.
        let png = try DecodedPNG(path: output)
        #expect(png.width == 3 * 96 + 4 * 8 && png.height == 28 + 2 * 50 + 3 * 8)
        #expect(run.stdout == "\(output): 5 entries of \(table.path) in 3 columns and 2 rows, 320x152 pixels\n")
        // Tile "a" centred in the first cell.
        #expect(png.pixel(8 + 28 + 20, 28 + 8 + 15) == [200, 30, 30])
        func darkPixels(x: Range<Int>, y: Range<Int>) -> Int {
            y.reduce(0) { n, py in n + x.filter { png.pixel($0, py)[0] < 0x90 }.count }
        }
        if TextRenderer.isAvailable {
            #expect(run.stderr.isEmpty)
            #expect(darkPixels(x: 0..<320, y: 0..<28) > 50, "the title")
            #expect(darkPixels(x: 8..<104, y: 66..<86) > 5, "the caption of 'a'")
            #expect(darkPixels(x: 8..<104, y: 86..<94) == 0, "nothing below the caption")
        } else {
            #expect(run.stderr.contains("note: the sheet has no captions"))
        }
    }

    @Test func transparentPixelsShowACheckerboard() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 32, height: 32, keys: ["clear"]) { _, w, h in
            [UInt8](repeating: 0, count: w * h * 4)
        }
        let output = scratch.file("sheet.png")
        #expect(try imagetable("preview", table.path, "-o", output, "--no-captions").status == 0)
        let png = try DecodedPNG(path: output)
        #expect(png.width == 48 && png.height == 48)
        #expect(png.pixel(8, 8) == [255, 255, 255] && png.pixel(16, 8) == [0xD6, 0xD6, 0xD6] && png.pixel(16, 16) == [255, 255, 255])
    }

    @Test func limitAndLargeTablesKeepTheSheetBounded() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try flatTable(scratch)
        let run = try imagetable("preview", table.path, "-o", scratch.file("s.png"), "--limit", "2", "--no-captions")
        #expect(run.status == 0)
        #expect(run.stdout.contains("2 entries of \(table.path) (the first 2 of 5; see --limit) in 2 columns and 1 row, 104x46 pixels"))
        let big = try imagetable("preview", table.path, "-o", scratch.file("big.png"), "--columns", "100000", "--tile-size", "1024")
        // Columns are capped at the number of entries, and tiles never enlarge 40x30 slots.
        #expect(big.status == 0 && big.stdout.contains(" in 5 columns and 1 row, 528x94 pixels"), "\(big.stdout)")
        let png = try DecodedPNG(path: scratch.file("big.png"))
        #expect(png.width == 528 && png.height == 94)
    }

    @Test func anEmptyTableMakesATitleOnlySheet() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("empty.imagetable"), style: .grayscale8, keys: [])
        let run = try imagetable("preview", table.path, "-o", scratch.file("s.png"))
        #expect(run.status == 0)
        let png = try DecodedPNG(path: scratch.file("s.png"))
        #expect(png.width == 96 + 16 && png.height == 28 + 8)
    }

    @Test func failuresExitOneAndBadUsage64() throws {
        let scratch = try TemporaryDirectory()
        let (table, _) = try flatTable(scratch)
        let missing = try imagetable("preview", scratch.file("none.imagetable"), "-o", scratch.file("s.png"))
        #expect(missing.status == 1 && missing.stderr == "\(scratch.file("none.imagetable")): error: no such file [not-found]\n")
        let unwritable = try imagetable("preview", table.path, "-o", scratch.file("no/dir/s.png"))
        #expect(unwritable.status == 1 && unwritable.stderr.contains("[output-failed]"))
        // The sheet never replaces the table it shows (it did, leaving a PNG where the table was).
        let before = try Data(contentsOf: URL(fileURLWithPath: table.path))
        let itself = try imagetable("preview", table.path, "-o", table.path)
        #expect(itself.status == 1 && itself.stderr.contains("\(table.path): error: is the table being read; refusing to replace it [output-failed]"),
                "\(itself.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: table.path)) == before)
        #expect(try imagetable("preview", table.path).status == 64)
        #expect(try imagetable("preview", table.path, "-o", "s.png", "--columns", "0").status == 64)
        #expect(try imagetable("preview", table.path, "-o", "s.png", "--tile-size", "8").status == 64)
        #expect(try imagetable("preview", table.path, "-o", "s.png", "--limit", "0").status == 64)
        #expect(try imagetable("preview", table.path, "-o", "s.png", "--sort", "size").status == 64)
    }
}

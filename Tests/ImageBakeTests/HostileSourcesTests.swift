import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One bake over a generated corpus of hostile sources: every one is reported with its path
/// (failed or skipped) and, where it is certain, its code; the good photo beside them is baked;
/// the exit status is 3 (some sources failed); text output prints every path escaped; and the
/// process tree of the bake (the bake and its two workers) stays under 300 MB.
@Suite struct HostileSourcesTests {
    /// The documented bound on the process tree of this bake, `--jobs 2` (docs/BAKE.md): the
    /// summed resident peaks of its live processes at every 10 ms sample, and the largest single
    /// process (``ProcessTreeMemory``).
    static let treeBytesBound = 300 << 20

    /// A PNG whose header claims `width` × `height` and whose data is one empty IDAT.
    static func pngBomb(width: UInt32, height: UInt32) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(CRC32.checksum(body))
        }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
    }

    /// A GIF whose logical screen and only image claim 65535 × 65535.
    static let gifBomb: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0]
        + [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]

    /// A little-endian TIFF whose one 8-bit grey strip claims `width` × `height`, over an empty
    /// deflate stream.
    static func tiffBomb(width: UInt32, height: UInt32) -> [UInt8] {
        // (tag, type: 3 SHORT or 4 LONG, value); the strip's offset is right after the IFD.
        let entries: [(UInt16, UInt16, UInt32)] = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 8), (262, 3, 1),
                                                   (273, 4, 8 + 2 + 9 * 12 + 4), (277, 3, 1), (278, 4, height), (279, 4, 8)]
        var tiff: [UInt8] = [0x49, 0x49, 42, 0] + le32(8) + [UInt8(entries.count), 0]
        for (tag, type, value) in entries {
            tiff += le16(tag) + le16(type) + le32(1) + (type == 3 ? le16(UInt16(value)) + [0, 0] : le32(value))
        }
        return tiff + le32(0) + [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
    }

    /// A lossless WebP whose header claims 16383 × 16383, the most a WebP can hold (and exactly
    /// the default `--max-pixels`, so it is decoded, not refused), over 20 bytes of data.
    static let webpBomb: [UInt8] = {
        let vp8l = [0x2F] + le32(16382 | 16382 << 14) + [UInt8](repeating: 0, count: 20)
        return riff(chunk("VP8L", vp8l))
    }()

    /// An animated WebP whose canvas claims 60000 × 60000 (its header allows 2²⁴ a side) around
    /// one 1×1 lossless frame.
    static let webpCanvasBomb: [UInt8] = {
        let frame: [UInt8] = [0x2F, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0x11, 0xFD, 0x0F, 0x44, 0x44, 0xFF, 0x03]
        let vp8x = [0x02, 0, 0, 0] + le24(59999) + le24(59999)  // the animation flag, the canvas less one
        let anmf = le24(0) + le24(0) + le24(0) + le24(0) + le24(100) + [0] + chunk("VP8L", frame)
        return riff(chunk("VP8X", vp8x) + chunk("ANIM", [0, 0, 0, 0, 0, 0]) + chunk("ANMF", anmf))
    }()

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le24(_ v: UInt32) -> [UInt8] { Array(le32(v).prefix(3)) }
    static func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }
    /// A RIFF chunk, padded to an even size.
    static func chunk(_ tag: String, _ data: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + le32(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : [])
    }
    static func riff(_ chunks: [UInt8]) -> [UInt8] { Array("RIFF".utf8) + le32(UInt32(4 + chunks.count)) + Array("WEBP".utf8) + chunks }

    /// Writes `bytes` at a path given as raw bytes (names that are not UTF-8).
    static func write(_ bytes: [UInt8], rawPath: [UInt8]) -> Bool {
        let fd = (rawPath + [0]).withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { open($0, O_CREAT | O_WRONLY | O_TRUNC, 0o644) }
        }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    @Test func everyHostileSourceIsReportedAndTheGoodOneBaked() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 32, maximumCount: 100), include: "**")
        let src = project.sources
        try project.add("good.jpg", from: Corpus.photo("Landscape_1.jpg"))
        var expected: Set<String> = []  // the names that must be reported, as their paths end
        var codes: [String: String] = [:]  // and the code of each whose code is certain
        for file in Corpus.pngSuiteFiles where URL(fileURLWithPath: file).lastPathComponent.hasPrefix("x") {
            let name = "pngsuite-" + URL(fileURLWithPath: file).lastPathComponent
            try project.add(name, from: file)
            expected.insert(name)
        }
        // Each format, cut at a tenth, half and nine tenths of its bytes.
        for suffix in ["jpg", "png", "webp", "gif", "tif"] {
            let whole = project.root + "/whole.\(suffix)"
            let made = try run("/usr/bin/env", ["vips", "thumbnail", Corpus.photo("Portrait_1.jpg"), whole, "160"])
            #expect(made.status == 0, "vips could not write .\(suffix): \(made.stderr)")
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
            for tenths in [1, 5, 9] {
                let name = "cut-\(tenths)0pc.\(suffix)"
                project.add(name, bytes: Array(bytes.prefix(bytes.count * tenths / 10)))
                expected.insert(name)
            }
        }
        // Decompression bombs, one of each format: headers claiming more pixels than
        // --max-pixels, refused before decoding; WebP cannot claim more, so its bombs claim the
        // most it can hold (and fail to decode within the bound) or a canvas libvips refuses.
        var jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_2.jpg"))))
        let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) })
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: [0xEA, 0x60, 0xEA, 0x60])  // 60000 × 60000; libjpeg takes up to 65500
        let bombs: [(String, [UInt8], String)] = [
            ("bomb.jpg", jpeg, "too-many-pixels"), ("bomb.png", Self.pngBomb(width: 100_000, height: 100_000), "too-many-pixels"),
            ("bomb.gif", Self.gifBomb, "too-many-pixels"), ("bomb.tif", Self.tiffBomb(width: 100_000, height: 100_000), "too-many-pixels"),
            ("bomb.webp", Self.webpBomb, "decode-failed"), ("bomb-canvas.webp", Self.webpCanvasBomb, "decode-failed"),
        ]
        for (name, bytes, code) in bombs {
            project.add(name, bytes: bytes)
            codes[name] = code
        }
        // Empty, special and impossible files, and hostile names.
        project.add("empty.jpg", bytes: [])
        #expect(mkfifo(src + "/fifo.jpg", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: src + "/loop-a.jpg", withDestinationPath: "loop-b.jpg")
        try FileManager.default.createSymbolicLink(atPath: src + "/loop-b.jpg", withDestinationPath: "loop-a.jpg")
        try FileManager.default.createDirectory(atPath: src + "/folder.jpg", withIntermediateDirectories: false)
        project.add("new\nline.jpg", bytes: Array("not an image".utf8))
        let escapes = "\u{1B}]0;owned\u{07}\u{1B}[2J.jpg"
        project.add(escapes, bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10])
        #expect(Self.write([0xFF, 0xD8, 0xFF], rawPath: Array((src + "/").utf8) + [0x69, 0xFF, 0xFE, 0x2E, 0x6A, 0x70, 0x67]))
        let notUTF8 = "i\\xFF\\xFE.jpg"  // as reported: each byte outside UTF-8 written \xFF
        codes.merge(["empty.jpg": "empty", "fifo.jpg": "not-a-regular-file", "loop-a.jpg": "unreadable", "loop-b.jpg": "unreadable",
                     "folder.jpg": "not-a-regular-file", "new\nline.jpg": "not-an-image", escapes: "truncated",
                     notUTF8: "name-not-utf8"]) { $1 }
        expected.formUnion(codes.keys)

        let bake = try ProcessTreeMemory(Products.imagetable, ["bake", project.manifestPath, "--format", "json", "--timeout", "30", "--jobs", "2"])
        #expect(bake.status == 3, "\(bake.stderr.suffix(2000))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bake.stdout.utf8)) as? [String: Any])
        let listed = (json["failures"] as? [[String: Any]] ?? []) + (json["skipped"] as? [[String: Any]] ?? [])
        var reported: [String: String] = [:]  // name → code
        for item in listed {
            let path = try #require(item["path"] as? String)
            #expect(path.hasPrefix(src + "/"), "\(path)")
            reported[(path as NSString).lastPathComponent] = item["code"] as? String
        }
        for name in expected.sorted() {
            #expect(reported[name] != nil, "\(PrintableText.escaped(name)) was not reported")
        }
        for (name, code) in codes.sorted(by: { $0.key < $1.key }) {
            #expect(reported[name] == code, "\(PrintableText.escaped(name)): \(reported[name] ?? "not reported"), expected \(code)")
        }
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["decoded"] == 1 && sources["failed"]! >= 20, "\(sources)")
        #expect(try project.entries().values.allSatisfy { Set($0.keys) == ["good.jpg"] })

        // The same bake in text: each hostile name on one line, escaped; no escape sequence
        // reaches the terminal, and the name with a newline forges no line of its own.
        let text = try run(Products.imagetable, ["bake", project.manifestPath, "--no-progress", "--timeout", "30", "--jobs", "2"])
        #expect(text.status == 3)
        #expect(!text.stderr.contains("\u{1B}"))
        let lines = text.stderr.split(separator: "\n").map(String.init)
        for (printed, level, code) in [("\\u{1B}]0;owned\\u{7}\\u{1B}[2J.jpg", "error", "truncated"), (notUTF8, "error", "name-not-utf8"),
                                       ("folder.jpg", "warning", "not-a-regular-file"), ("new\\nline.jpg", "warning", "not-an-image")] {
            #expect(lines.contains { $0.hasPrefix("\(src)/\(printed): \(level): ") && $0.hasSuffix(" [\(code)]") },
                    "no \(level) line for \(printed) in:\n\(text.stderr)")
        }
        #expect(lines.allSatisfy { $0.hasPrefix(src + "/") || $0.hasPrefix("  ") || $0.contains(": baked ") }, "\(text.stderr)")

        // The measurement saw the processes (it reads 0 where /proc cannot be read).
        #expect(bake.largestProcessBytes > 1 << 20 && bake.boundBytes >= bake.largestProcessBytes)
        #expect(bake.boundBytes < Self.treeBytesBound, "the bake's process tree reached \(bake.boundBytes >> 20) MB")
        #expect(bake.largestProcessBytes < Self.treeBytesBound, "one process of the bake reached \(bake.largestProcessBytes >> 20) MB")
        print("[hostile] \(expected.count) hostile sources reported; the process tree's summed peaks \(bake.boundBytes >> 20) MB "
              + "(resident at once \(bake.sampledBytes >> 20) MB), the largest process \(bake.largestProcessBytes >> 20) MB")
    }
}

import Foundation
import ImageTableCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One bake over a generated corpus of hostile sources: every one is reported with its path
/// (failed or skipped), the good photo beside them is baked, the exit status is 3 (some sources
/// failed), and the largest process of the bake stays under 300 MB.
@Suite struct HostileSourcesTests {
    /// The documented bound on any one process of a bake over hostile sources (docs/BAKE.md).
    static let peakBytesBound = 300 << 20

    /// A PNG whose header claims `width` × `height` and whose data is one empty IDAT.
    static func pngBomb(width: UInt32, height: UInt32) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
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
        var expected: Set<String> = []  // file names that must be reported
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
        // Decompression bombs: headers claiming far more pixels than --max-pixels.
        var jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_2.jpg"))))
        let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) })
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: [0xFF, 0xF0, 0xFF, 0xF0])
        for (name, bytes) in [("bomb.jpg", jpeg), ("bomb.png", Self.pngBomb(width: 100_000, height: 100_000)), ("bomb.gif", Self.gifBomb)] {
            project.add(name, bytes: bytes)
            expected.insert(name)
        }
        // Empty, special and impossible files, and hostile names.
        project.add("empty.jpg", bytes: [])
        #expect(mkfifo(src + "/fifo.jpg", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: src + "/loop-a.jpg", withDestinationPath: "loop-b.jpg")
        try FileManager.default.createSymbolicLink(atPath: src + "/loop-b.jpg", withDestinationPath: "loop-a.jpg")
        try FileManager.default.createDirectory(atPath: src + "/folder.jpg", withIntermediateDirectories: false)
        project.add("new\nline.jpg", bytes: Array("not an image".utf8))
        project.add("\u{1B}]0;owned\u{07}\u{1B}[2J.jpg", bytes: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10])
        #expect(Self.write([0xFF, 0xD8, 0xFF], rawPath: Array((src + "/").utf8) + [0x69, 0xFF, 0xFE, 0x2E, 0x6A, 0x70, 0x67]))
        expected.formUnion(["empty.jpg", "fifo.jpg", "loop-a.jpg", "loop-b.jpg", "new\nline.jpg"])

        // The bake, under a Python parent that reports the largest resident size of any process.
        let bake = try run("/usr/bin/env", ["python3", "-c", """
            import resource, subprocess, sys
            done = subprocess.run(sys.argv[1:], capture_output=True, text=True, errors="replace")
            sys.stdout.write(done.stdout)
            sys.stderr.write(done.stderr)
            print(f"PEAK {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}", file=sys.stderr)
            sys.exit(done.returncode)
            """, Products.imagetable, "bake", project.manifestPath, "--format", "json", "--timeout", "30"])
        #expect(bake.status == 3, "\(bake.stderr.suffix(2000))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bake.stdout.utf8)) as? [String: Any])
        let failed = (json["failures"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        let skipped = (json["skipped"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        let warned = json["warnings"] as? [String] ?? []
        let reported = Set((failed + skipped).map { ($0 as NSString).lastPathComponent })
        for name in expected.sorted() {
            #expect(reported.contains(name) || warned.contains { $0.contains(src + "/" + name) },
                    "\(PrintableText.escaped(name)) was not reported")
        }
        let sources = try #require(json["sources"] as? [String: Int])
        #expect(sources["decoded"] == 1 && sources["failed"]! >= 20, "\(sources)")
        #expect(try project.entries().values.allSatisfy { Set($0.keys) == ["good.jpg"] })
        // Terminal escapes never reach standard error raw, and no line is forged.
        #expect(!bake.stderr.contains("\u{1B}") && !bake.stderr.contains("\nline.jpg"))
        let peak = try #require(bake.stderr.split(separator: "\n").last { $0.hasPrefix("PEAK ") }.flatMap { Int($0.dropFirst(5)) })
        #expect(peak < Self.peakBytesBound, "the largest process of the bake reached \(peak >> 20) MB")
        print("[hostile] \(expected.count) hostile sources reported; the largest process peaked at \(peak >> 20) MB")
    }
}

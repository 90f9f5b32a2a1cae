import Foundation
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// Concurrent renders that fail, or warn, each get their own words.
///
/// libvips 8.14 keeps one error buffer for the whole process, written by whichever thread fails,
/// including renders evaluating pixels outside the pipeline's lock. Without care a render takes
/// another's text: a corrupt PNG's CRC error made a PPM, refused by another thread,
/// `decode-failed` instead of `unsupported-format`, and a sound image was given another render's
/// complaint as its warning. Every outcome (code and cause, or warnings) must equal the same
/// render done alone.
@Suite(.serialized) struct ErrorCrossTalkTests {
    /// What one render came to, as text that compares whole.
    static func outcome(_ source: SourceImage, renderer: ImageRenderer) -> String {
        let spec = TableFormat(width: 24, height: 24, style: .bgra32)
        do {
            let (report, _) = try render(source, [spec], renderer: renderer)
            return "ok: " + report.warnings.joined(separator: " | ")
        } catch {
            return "\(error.code.rawValue): \(error.cause ?? "")"
        }
    }

    /// A photo with three bytes of junk before its quantisation tables: libjpeg warns while
    /// the header is read, and libvips' JPEG loader leaves the warning in the shared buffer.
    static func junkJPEG() throws -> SourceImage {
        var junk = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1")))
        junk.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(junk.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        return .data(junk, name: "junk.jpg")
    }

    /// A photo with a restart marker in the middle of its scan: libjpeg warns while the pixels
    /// are decoded ("premature end of data segment"), outside the pipeline's lock.
    static func strayMarkerJPEG() throws -> SourceImage {
        var data = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1")))
        let scan = try #require(data.firstRange(of: Data([0xFF, 0xDA]))).upperBound
        data.insert(contentsOf: [0xFF, 0xD3], at: scan + (data.count - scan) / 2)
        return .data(data, name: "stray-marker.jpg")
    }

    /// PngSuite's damaged files (some refused while their header is read, some while their
    /// pixels are), a PPM (refused as its loader is looked up), JPEGs that libjpeg warns of in
    /// the header and in the pixels (through libvips: the direct path's words are its own), and
    /// sound images between them.
    static func sources() throws -> [SourceImage] {
        let pngs = Corpus.pngSuiteFiles.filter {
            let name = URL(fileURLWithPath: $0).lastPathComponent
            return name.hasPrefix("x") || ["basn2c08.png", "basn6a16.png", "basi0g04.png", "tbrn2c08.png"].contains(name)
        }
        var ppm = Array("P6\n4 4\n255\n".utf8)
        ppm += [UInt8](repeating: 200, count: 4 * 4 * 3)
        let png = try Data(contentsOf: URL(fileURLWithPath: Corpus.png("basn2c08")))
        return pngs.map(SourceImage.file) + [.data(Data(ppm), name: "grey.ppm"), try junkJPEG(), try strayMarkerJPEG(),
                                             .data(png.prefix(png.count * 6 / 10), name: "truncated.png")]
    }

    /// One thread: what a damaged JPEG leaves in libvips' buffer (its loader logs it when freed,
    /// and leaves it) is not the next failure's cause. A bake's worker renders this way.
    @Test func aFailureAfterADamagedJPEGHasOnlyItsOwnWords() throws {
        let renderer = ImageRenderer(directJPEG: false)
        let png = SourceImage.file(Corpus.png("xcsn0g01"))
        let alone = Self.outcome(png, renderer: renderer)
        #expect(alone == "decode-failed: vipspng: libpng read error")
        for jpeg in [try Self.junkJPEG(), try Self.strayMarkerJPEG()] {
            let warned = Self.outcome(jpeg, renderer: renderer)
            #expect(warned.hasPrefix("ok: VipsJpeg: Corrupt JPEG data"), "\(jpeg.name): \(warned)")
            #expect(Self.outcome(png, renderer: renderer) == alone, "after \(jpeg.name)")
        }
    }

    @Test func concurrentOutcomesEqualSequentialOnes() async throws {
        let renderer = ImageRenderer(directJPEG: false)
        let sources = try Self.sources()
        let expected = Dictionary(uniqueKeysWithValues: sources.map { ($0.name, Self.outcome($0, renderer: renderer)) })
        // The sequential outcomes themselves: a code each damaged file is known by, and no
        // warning of a sound file's.
        #expect(expected["grey.ppm"]?.hasPrefix("unsupported-format") == true, "\(expected["grey.ppm"] ?? "")")
        #expect(expected[Corpus.png("xcsn0g01")]?.hasPrefix("decode-failed") == true)
        #expect(expected[Corpus.png("basn2c08")] == "ok: ")
        #expect(expected["stray-marker.jpg"]?.contains("premature end of data segment") == true, "\(expected["stray-marker.jpg"] ?? "")")
        let tasks = 4, rounds = 150
        let wrong = await withTaskGroup(of: [String].self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var wrong: [String] = []
                    for r in 0..<rounds {
                        let source = sources[(t * 5 + r) % sources.count]
                        let got = Self.outcome(source, renderer: renderer)
                        if got != expected[source.name] { wrong.append("\(source.name): \(got), alone: \(expected[source.name] ?? "")") }
                    }
                    return wrong
                }
            }
            return await group.reduce([], +)
        }
        #expect(wrong.isEmpty, "\(wrong.count) outcomes differ, such as \(wrong.prefix(3))")
    }
}

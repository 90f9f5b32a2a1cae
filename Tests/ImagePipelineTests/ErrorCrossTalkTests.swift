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

    /// PngSuite's damaged files (some refused while their header is read, some while their
    /// pixels are), a PPM (refused as its loader is looked up), and sound images between them.
    static var sources: [SourceImage] {
        let pngs = Corpus.pngSuiteFiles.filter {
            let name = URL(fileURLWithPath: $0).lastPathComponent
            return name.hasPrefix("x") || ["basn2c08.png", "basn6a16.png", "basi0g04.png", "tbrn2c08.png"].contains(name)
        }
        var ppm = Array("P6\n4 4\n255\n".utf8)
        ppm += [UInt8](repeating: 200, count: 4 * 4 * 3)
        return pngs.map(SourceImage.file) + [.data(Data(ppm), name: "grey.ppm")]
    }

    @Test func concurrentOutcomesEqualSequentialOnes() async throws {
        let renderer = ImageRenderer()
        let sources = Self.sources
        let expected = Dictionary(uniqueKeysWithValues: sources.map { ($0.name, Self.outcome($0, renderer: renderer)) })
        // The sequential outcomes themselves: a code each damaged file is known by, and no
        // warning of a sound file's.
        #expect(expected["grey.ppm"]?.hasPrefix("unsupported-format") == true, "\(expected["grey.ppm"] ?? "")")
        #expect(expected[Corpus.png("xcsn0g01")]?.hasPrefix("decode-failed") == true)
        #expect(expected[Corpus.png("basn2c08")] == "ok: ")
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

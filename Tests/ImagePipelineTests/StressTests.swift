import Foundation
import ImagePipeline
import TestSupport
import Testing
import ImageTableCore

/// The runtime cache's way of using the engine: several Swift tasks rendering at once through a
/// shared renderer.
///
/// liborc 0.4.33 (Debian bookworm) frees compiled vector code without its lock, so threads that
/// build and release libvips operations concurrently crash now and then (docs/PIPELINE.md,
/// "Thread safety"); the engine prevents it with one global lock around every build and release.
/// The crash is rare per image, so this test maximises the racy part: many tiny opaque images
/// whose every member is a fresh `vips_resize` (each compiles and later frees orc code) and
/// little pixel work. Measured with the lock removed: the default run crashed (SIGSEGV) in 2 of 8
/// runs, and a 6,400-render run of the tiny kind in 4 of 4. With the lock: no crash in any run.
/// `IMAGEPIPELINE_SOAK=1` renders ten times as much (about three minutes). Every output must also
/// equal the same render done alone, byte for byte.
@Suite struct StressTests {
    static let soak = ProcessInfo.processInfo.environment["IMAGEPIPELINE_SOAK"] != nil

    /// Small opaque RGB PNGs of assorted sizes, so resize factors vary.
    static let tinySources: [(String, Data)] = [(64, 48), (57, 80), (90, 33), (41, 41)].map { w, h in
        var pixels: [UInt8] = []
        for y in 0..<h { for x in 0..<w { pixels += [UInt8(x * 255 / w), UInt8(y * 255 / h), UInt8((x * y) & 0xFF)] } }
        return ("tiny-\(w)x\(h).png", Data(PNGWriter.encode(width: w, height: h, channels: 3, pixels: pixels)))
    }

    static func renderAll(_ sources: [SourceImage], _ specs: [TableFormat], renderer: ImageRenderer,
                          tasks: Int, rounds: Int, expected: [String: [[UInt8]]]) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var mismatches = 0
                    for r in 0..<rounds {
                        let source = sources[(t * 7 + r) % sources.count]
                        let (_, slots) = try render(source, specs, renderer: renderer)
                        if slots.map({ Array($0.buffer) }) != expected[source.name] { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
    }

    static func sequential(_ sources: [SourceImage], _ specs: [TableFormat], renderer: ImageRenderer) throws -> [String: [[UInt8]]] {
        var expected: [String: [[UInt8]]] = [:]
        for source in sources {
            let (_, slots) = try render(source, specs, renderer: renderer)
            expected[source.name] = slots.map { Array($0.buffer) }
        }
        return expected
    }

    @Test func concurrentTinyRendersMatchSequentialOnes() async throws {
        let sources = Self.tinySources.map { SourceImage.data($0.1, name: $0.0) }
        let specs = [TableFormat(width: 37, height: 29, style: .bgr32),
                     TableFormat(width: 23, height: 23, style: .bgr16, fit: .fill),
                     TableFormat(width: 13, height: 9, style: .grayscale8, fit: .contain),
                     TableFormat(width: 7, height: 7, style: .bgra32, cornerRadius: 2)]
        let renderer = ImageRenderer()
        let expected = try Self.sequential(sources, specs, renderer: renderer)
        let tasks = 4, rounds = Self.soak ? 2000 : 200
        let mismatches = try await Self.renderAll(sources, specs, renderer: renderer, tasks: tasks, rounds: rounds, expected: expected)
        #expect(mismatches == 0)
        #expect(renderer.decodeCount == sources.count + tasks * rounds)
    }

    @Test func concurrentPhotoAndPngSuiteRendersMatchSequentialOnes() async throws {
        let photos = ["Landscape_1.jpg", "Portrait_3.jpg", "Landscape_8.jpg", "Portrait_6.jpg"].map(Corpus.photo)
        let small = Corpus.pngSuiteFiles.filter { !URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("x") }
        let sources = (photos + small.prefix(40)).map(SourceImage.file)
        let specs = [TableFormat(width: 48, height: 48, style: .bgra32, cornerRadius: 6),
                     TableFormat(width: 31, height: 17, style: .bgr16, fit: .fill),
                     TableFormat(width: 20, height: 20, style: .grayscale8, fit: .cover, crop: .attention),
                     TableFormat(width: 12, height: 12, style: .bgr32, fit: .inside)]
        let renderer = ImageRenderer()
        let expected = try Self.sequential(sources, specs, renderer: renderer)
        let tasks = 4, rounds = Self.soak ? 500 : 50
        let mismatches = try await Self.renderAll(sources, specs, renderer: renderer, tasks: tasks, rounds: rounds, expected: expected)
        #expect(mismatches == 0)
    }
}

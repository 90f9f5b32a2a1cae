import Foundation
import ImagePipeline
import Testing

/// The runtime cache's way of using the engine: several Swift tasks rendering at once through
/// shared renderers. liborc 0.4.33 (Debian bookworm) crashes now and then when threads build and
/// release libvips operations concurrently (docs/PIPELINE.md, "Thread safety"); without the
/// global lock this test segfaulted the test process. Every output must also equal the same
/// render done alone, byte for byte.
@Suite struct StressTests {
    @Test func hundredsOfConcurrentRendersMatchSequentialOnes() async throws {
        let photos = ["Landscape_1.jpg", "Portrait_3.jpg", "Landscape_8.jpg", "Portrait_6.jpg"].map(Corpus.photo)
        let small = Corpus.pngSuite.filter { !URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("x") }
        // Small PNGs are mostly building and releasing operations: the racy part.
        let sources = photos + Array(small.prefix(60))
        let specs = [MemberSpec(width: 48, height: 48, style: .bgra32, cornerRadius: 6),
                     MemberSpec(width: 31, height: 17, style: .bgr16, fit: .fill),
                     MemberSpec(width: 20, height: 20, style: .grayscale8, fit: .contain, crop: .attention),
                     MemberSpec(width: 12, height: 12, style: .bgr32)]
        let renderer = ImageRenderer()
        var expected: [String: [[UInt8]]] = [:]
        for source in sources {
            let (_, slots) = try render(.file(source), specs, renderer: renderer)
            expected[source] = slots.map { Array($0.buffer) }
        }
        let baseline = expected
        let tasks = 6, rounds = 60   // 360 renders on top of the sequential ones
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var bad = 0
                    for r in 0..<rounds {
                        let source = sources[(t * 17 + r * 5) % sources.count]
                        let (_, slots) = try render(.file(source), specs, renderer: renderer)
                        if slots.map({ Array($0.buffer) }) != baseline[source] { bad += 1 }
                    }
                    return bad
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(renderer.decodeCount == sources.count + tasks * rounds)
    }
}

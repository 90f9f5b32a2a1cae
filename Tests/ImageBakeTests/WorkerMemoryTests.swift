import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing

/// Each worker's own memory is limited (`--max-worker-memory`, `RLIMIT_DATA`): a source that
/// needs more fails, said so, and is tried again by the next bake, where it took the machine's
/// memory (a 1 MB PNG of 1,000,000 × 268 pixels, cropped to a square, took 4.7 GB in a worker).
@Suite struct WorkerMemoryTests {
    /// A PNG of `width` × `height` transparent pixels, deflated by Python's zlib: about a
    /// thousandth of its pixels' size.
    static func widePNG(width: Int, height: Int, to path: String) throws {
        let script = """
            import struct, sys, zlib
            W, H = \(width), \(height)
            def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
            z = zlib.compressobj(9)
            data = b''.join(z.compress(b'\\0' * (1 + W * 4)) for _ in range(H)) + z.flush()
            ihdr = struct.pack('>IIBBBBB', W, H, 8, 6, 0, 0, 0)
            open(sys.argv[1], 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', data) + chunk(b'IEND', b''))
            """
        let made = try run("/usr/bin/env", ["python3", "-c", script, path])
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test(.disabled(if: Sanitizers.any, "a worker under a sanitizer takes no memory limit"))
    func aSourceThatNeedsMoreThanAWorkerMayHaveFailsAndIsTriedAgain() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 150, maximumCount: 10))
        try project.add("ok.jpg", from: Corpus.photo("Landscape_1"))
        try Self.widePNG(width: 100_000, height: 268, to: project.sources + "/wide.png")
        let limited = try project.bake(jobs: 1) { $0.workerMemoryLimit = 128 << 20 }
        #expect(limited.decoded == 1 && limited.failed.map(\.key) == ["wide.png"], "\(limited.failed)")
        let error = try #require(limited.failed.first?.error)
        #expect(error.code == .decodeFailed && error.message == "it needs more memory than a worker may have (--max-worker-memory 128.0 MiB)"
                && error.cause?.contains("out of memory") == true, "\(error)")
        // Not remembered as the file's failure: with room enough, the next bake decodes it.
        let unlimited = try project.bake(jobs: 1) { $0.workerMemoryLimit = nil }
        #expect(unlimited.decoded == 1 && unlimited.failed.isEmpty && unlimited.unchanged == 1, "\(unlimited.failed)")
    }

    /// Under a limit, a decoder's own words for a failed allocation (libjpeg's "Insufficient
    /// memory", not libvips' "out of memory") and a worker ended by a trap (GLib's, when it cannot
    /// allocate) are each the source's failure, said so: the trap no longer stops the bake as
    /// "worker processes keep failing", and neither is remembered (the next bake tries again).
    @Test(arguments: [FakeWorker.Mode.insufficientMemory, .trap])
    func allocationFailuresUnderALimitAreTheSourcesAndForgotten(mode: FakeWorker.Mode) throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for i in 0..<4 { try project.add("s\(i).jpg", from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(mode, in: project.root)
        for _ in 0..<2 {
            let summary = try project.bake(jobs: 1) {
                $0.workerExecutable = fake
                $0.workerMemoryLimit = 512 << 20
            }
            #expect(summary.failed.count == 4 && summary.stoppedBy == nil, "\(summary.failed)")
            let said = mode == .trap ? "; it may have needed more memory than a worker may have (--max-worker-memory 512.0 MiB)"
                : "it needs more memory than a worker may have (--max-worker-memory 512.0 MiB)"
            #expect(summary.failed.allSatisfy { $0.error.message.hasSuffix(said) }, "\(summary.failed.map(\.error.message))")
        }
    }
}

import Foundation
import ImageCacheVips
import ImagePipeline
import ImageTableCore
import TestSupport
import Testing

/// The cache's libvips renderer refuses damaged sources as the bake's workers do.
@Suite struct VipsRendererTests {
    /// In-process, libvips evaluated each image on a thread per core, and a PNG whose IDAT
    /// checksum is wrong was now and then accepted as a blank image, stored as a fresh entry
    /// (91 renders in 300 here): refused every time now, as by the bake, whose workers always
    /// ran libvips on one thread per image, the pipeline's default now.
    @Test func aCorruptPNGIsRefusedEveryTime() throws {
        let renderer = VipsRenderer()
        #expect(PipelineRuntime.settings.concurrency == 1)
        let format = TableFormat(width: 16, height: 16, style: .bgra32)
        let layout = try format.layout()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.bytesPerRow * 16, alignment: 64)
        defer { buffer.deallocate() }
        var accepted = 0
        for _ in 0..<300 {
            do {
                _ = try renderer.render(.file(Corpus.png("xcsn0g01")), into: [RenderTarget(format: format, pixels: buffer, bytesPerRow: layout.bytesPerRow)])
                accepted += 1
            } catch {
                #expect(error.code == .decodeFailed, "\(error)")
            }
        }
        #expect(accepted == 0)
    }
}

import Foundation
import ImageTableCore
@_spi(Fuzzing) import ImagePipeline

// One input is a source file's bytes. They go through the renderer as a bake's worker hands
// them over, into four targets of odd sizes, one of each style and fit, each its own heap
// allocation of exactly its size (so AddressSanitizer stops at a write past one): JPEGs take
// the direct path (libjpeg, our resampler and packing, EXIF and ICC), every other format its
// structure checks and refusals, then fails at once, since libvips is never loaded (its decoders
// are not ours to fuzz, and it would cost each input milliseconds). The readers that only a
// libvips render reaches run apart (StructureReaders). What must hold for any bytes: no crash,
// no hang, no access outside the input or the targets; a render that succeeds reports one
// content rectangle per target, inside it.
private let formats: [TableFormat] = [
    TableFormat(name: "a", width: 37, height: 23, style: .bgra32, capacity: 1, rendering: RenderingOptions(fit: .cover, cornerRadius: 5)),
    TableFormat(name: "b", width: 16, height: 16, style: .bgr32, capacity: 1, rendering: RenderingOptions(fit: .contain)),
    TableFormat(name: "c", width: 9, height: 30, style: .bgr16, capacity: 1, rendering: RenderingOptions(fit: .fill)),
    TableFormat(name: "d", width: 64, height: 3, style: .grayscale8, capacity: 1, rendering: RenderingOptions(fit: .inside)),
]
// Small limits: a header may claim 65,535 × 65,535 pixels in a few bytes. Made on the first
// input, after libvips is pointed at a file that does not exist.
private let renderer: ImageRenderer = {
    setenv("IMAGETABLES_LIBVIPS", "/nonexistent/libvips-is-not-fuzzed.so", 1)
    return ImageRenderer(options: DecodeOptions(maxPixels: 4_000_000, maxSourceBytes: 1 << 20))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSourceBytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = bytes.withUnsafeBytes { StructureReaders.readAll($0, maxPixels: renderer.options.maxPixels) }
    let buffers = formats.map { format -> (UnsafeMutableRawBufferPointer, Int) in
        let bytesPerRow = format.width * format.style.bytesPerPixel
        return (UnsafeMutableRawBufferPointer.allocate(byteCount: bytesPerRow * format.height, alignment: 16), bytesPerRow)
    }
    defer { buffers.forEach { $0.0.deallocate() } }
    let targets = zip(formats, buffers).map { RenderTarget(format: $0, pixels: $1.0, bytesPerRow: $1.1) }
    guard let report = try? renderer.render(bytes: bytes, name: "input", into: targets) else { return 0 }
    guard report.members.count == formats.count else { fatalError("\(report.members.count) members for \(formats.count) targets") }
    for (member, format) in zip(report.members, formats) {
        let r = member.contentRect
        guard r.x >= 0, r.y >= 0, r.width >= 0, r.height >= 0, r.x + r.width <= format.width, r.y + r.height <= format.height else {
            fatalError("content rectangle \(r) outside the \(format.width)×\(format.height) target of \(format.style)")
        }
    }
    return 0
}

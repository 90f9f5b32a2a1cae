import Foundation
import ImagePipeline
import ImageTableCore

/// `imagetable-bench render DIR`: where a worker's time goes per source, in this one process:
/// the read alone, the read with its fingerprint, the decode alone (the direct path's libjpeg
/// call at the bake's scale), and the whole render into FastImageCache's four 150×150 formats.
/// Each stage over every JPEG in DIR, best of 3; the ratios to the decode are what to read.
enum RenderBench {
    static func run(directory: String) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".jpg") }.sorted()
            .map { directory + "/" + $0 }
        guard !files.isEmpty else { return print("render: no .jpg files in \(directory)") }
        let formats = PixelStyle.allCases.map { TableFormat(name: $0.rawValue, width: 150, height: 150, style: $0, capacity: 1) }
        let layouts = try formats.map { try $0.layout() }
        let buffers = layouts.map { UnsafeMutableRawBufferPointer.allocate(byteCount: $0.imageBytes, alignment: 64) }
        defer { buffers.forEach { $0.deallocate() } }
        let targets = zip(formats, zip(buffers, layouts)).map { RenderTarget(format: $0, pixels: $1.0, bytesPerRow: $1.1.bytesPerRow) }
        let bytes = try files.map { try SourceRead(path: $0, maxBytes: 1 << 30, fingerprinting: false, keepingBytes: true).bytes ?? [] }
        let renderer = ImageRenderer()
        PipelineRuntime.configure(.init(concurrency: 1))

        let n = Double(files.count)
        let read = try Harness.best(of: 3) { for f in files { _ = try SourceRead(path: f, maxBytes: 1 << 30, fingerprinting: false, keepingBytes: true) } }
        let hashed = try Harness.best(of: 3) { for f in files { _ = try SourceRead(path: f, maxBytes: 1 << 30, keepingBytes: true) } }
        let decode = Harness.best(of: 3) { for b in bytes { _ = DecodeProbe.decodeAtBakeScale(b, box: 150) } }
        let render = try Harness.best(of: 3) { for (f, b) in zip(files, bytes) { _ = try renderer.render(bytes: b, name: f, into: targets) } }
        print("Render: \(files.count) JPEGs from \(directory), 4 formats of 150x150, one thread")
        let ms = { (s: Double) in String(format: "%.3f ms", s / n * 1000) }
        Harness.report("read", ms(read))
        Harness.report("read + fingerprint (SHA-1)", ms(hashed), String(format: "%.2fx the decode", hashed / decode))
        Harness.report("decode (libjpeg at the bake's scale)", ms(decode), "1.00x")
        Harness.report("render: decode, resize, pack 4 formats", ms(render), String(format: "%.2fx the decode", render / decode))
    }
}

import Foundation
import ImageCache
import ImageTableCore

// A consumer of the ImageCache product alone, with a renderer of its own: it must build and link
// without libvips and without a YAML parser. ImageCacheTests runs it and reads its linked
// libraries and symbols; scripts/check-cache-without-libvips.sh builds a package like it where
// pkg-config cannot find libvips at all.

/// Draws every target as a flat grey with a key-dependent shade.
struct Flat: Renderer {
    func render(_ source: SourceImage, into targets: [RenderTarget]) throws(ImageTableError) -> [PixelRect] {
        guard case .data(let data, _) = source, let shade = data.first else {
            throw ImageTableError(.unsupportedFormat, "the probe draws one-byte sources only")
        }
        for target in targets {
            let rowBytes = target.format.width * target.format.style.bytesPerPixel
            for y in 0..<target.format.height {
                let row = target.pixels.baseAddress! + y * target.bytesPerRow
                row.initializeMemory(as: UInt8.self, repeating: shade, count: rowBytes)
                (row + rowBytes).initializeMemory(as: UInt8.self, repeating: 0, count: target.bytesPerRow - rowBytes)
            }
        }
        return targets.map { PixelRect(x: 0, y: 0, width: $0.format.width, height: $0.format.height) }
    }
}

struct OneByte: SourceProvider {
    func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage { .data(Data([0x5A])) }
}

// A name no earlier run can have left behind (`exit` below skips top-level `defer`s, and a
// reused process id once found a finished run's table, whose hit made this run fail).
let directory = NSTemporaryDirectory() + "cache-probe-\(UUID().uuidString)"
let format = TableFormat(name: "grey", family: "probe", width: 8, height: 4, style: .grayscale8, capacity: 4)
let cache = try ImageCache(configuration: .init(directory: directory, formats: [format]), provider: OneByte(), renderer: Flat())
let entity = CacheEntity(key: "k", sourceName: "v1")
let miss = try await cache.image(for: entity, format: "grey")
let hit = try cache.cachedImage(for: entity, format: "grey")
let ok = miss.copyPixels()?.first == 0x5A && hit?.copyPixels() == miss.copyPixels() && cache.statistics.decodes == 1
cache.close()
try? FileManager.default.removeItem(atPath: directory)
print(ok ? "ok" : "wrong pixels")
exit(ok ? 0 : 1)

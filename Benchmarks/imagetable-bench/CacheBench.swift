import CMallocCounter
import CLibvips
import Foundation
import ImageCache
import ImageCacheVips
import ImagePipeline
import ImageTableCore

/// The runtime cache: hits from a 10,000-entry table (random keys) through `ImageCache`, sync
/// and async, and through the core's writer and read-only reader; next to what a hit saves,
/// decoding the same photo into a 150×150 thumbnail from a JPEG and from a PNG file with the
/// pipeline, and a whole miss (fetch from memory, decode, store), all in this process.
enum CacheBench {
    static let count = 10_000
    static let format = TableFormat(name: "bench", family: "bench", width: 150, height: 150, style: .bgra32, capacity: count)

    /// Hands over the same bytes for every key (the miss figure).
    struct Bytes: SourceProvider {
        let data: Data
        func source(for entity: CacheEntity, format: TableFormat) async throws -> SourceImage { .data(data) }
    }

    /// One result row: seconds for `count` hits, and allocations for `count` hits when measured.
    typealias Row = (name: String, seconds: Double, allocations: UInt64?)

    static func run() async throws {
        print("Runtime cache: \(Harness.grouped(Double(count))) entries of 150×150 32BitBGRA, random keys")
        let dir = Harness.scratch("cache")
        let path = dir + "/" + format.fileName
        let entities = (0..<count).map { CacheEntity(key: "photos/\($0).jpg", sourceID: UUID()) }
        var order = entities
        order.shuffle()
        var sink = 0
        var rows: [Row] = []

        // The table, filled by the core (rendering 10,000 thumbnails would take minutes), and the
        // writer's own checked read, which the cache's hit wraps.
        let writer = try ImageTableWriter(path: path, format: format, options: .init(durability: .processCrashOnly))
        let pixels = (0..<writer.layout.imageBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try pixels.withUnsafeBytes { src in
            for e in entities { try writer.write(key: e.key, sourceUUID: e.sourceID) { $0.pixels.copyMemory(from: src) } }
        }
        rows.append(("core writer withImage (the cache's read)", Harness.best(of: 3) {
            for e in order { sink &+= (try? writer.withImage(entityUUID: e.entityUUID, sourceUUID: e.sourceID) { Int($0.bytes[0]) }) ?? 0 }
        }, nil))
        writer.close()

        let jpeg = try Data(contentsOf: URL(fileURLWithPath: jpegPath))
        let cache = try ImageCache(configuration: .init(directory: dir, formats: [format]), provider: Bytes(data: jpeg))
        defer { cache.close() }
        let reader = try ImageTableReader(path: path)
        rows.append(("core read-only reader withImage", Harness.best(of: 3) {
            for e in order { sink &+= (try? reader.withImage(entityUUID: e.entityUUID, sourceUUID: e.sourceID) { Int($0.bytes[0]) }) ?? 0 }
        }, nil))

        let syncHits = {
            for e in order { sink &+= (try? cache.cachedImage(for: e, format: "bench"))??.withPixels { Int($0.bytes[0]) } ?? 0 }
        }
        rows.append(("cache.cachedImage + withPixels (sync)", Harness.best(of: 3, syncHits), Harness.allocations(syncHits)))
        let oneRead = {
            for e in order { sink &+= (try? cache.withCachedPixels(for: e, format: "bench") { Int($0.bytes[0]) }) ?? 0 }
        }
        rows.append(("cache.withCachedPixels (sync, one read)", Harness.best(of: 3, oneRead), Harness.allocations(oneRead)))
        let handles = {
            for e in order where (try? cache.cachedImage(for: e, format: "bench")) != nil { sink &+= 1 }
        }
        rows.append(("cache.cachedImage, handle only", Harness.best(of: 3, handles), Harness.allocations(handles)))
        let asyncHits = try await asyncHits(cache, order, &sink)
        rows.append(asyncHits)

        let kept = order.prefix(1000).compactMap { try? cache.cachedImage(for: $0, format: "bench") }
        let rereads = { for _ in 0..<10 { for h in kept { sink &+= h.withPixels { Int($0.bytes[0]) } ?? 0 } } }
        let scale = Double(count) / Double(10 * kept.count)
        rows.append(("handle.withPixels again (per read)", Harness.best(of: 3, rereads) * scale,
                     UInt64(Double(Harness.allocations(rereads)) * scale)))

        for row in rows {
            var note = String(format: "%.0f ns per hit", row.seconds / Double(count) * 1e9)
            if let a = row.allocations { note += String(format: ", %.2f allocations per hit", Double(a) / Double(count)) }
            Harness.report(row.name, "\(Harness.grouped(Double(count) / row.seconds))/s", note)
        }
        try await decodes(hit: asyncHits.seconds / Double(count), cache: cache, jpeg: jpeg)
        if sink == 42 { print("") }  // keeps the reads from being optimised away
    }

    /// `await cache.image(for:format:)` from a task: best of three passes after a warm-up pass
    /// (the first one sizes the task's allocator), allocations counted over the last pass.
    static func asyncHits(_ cache: ImageCache, _ order: [CacheEntity], _ sink: inout Int) async throws -> Row {
        var best = Double.infinity
        var allocations: UInt64 = 0
        for pass in 0..<4 {
            let calls = malloc_counter_calls()
            let start = DispatchTime.now().uptimeNanoseconds
            for e in order { sink &+= try await cache.image(for: e, format: "bench").withPixels { Int($0.bytes[0]) } ?? 0 }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            allocations = malloc_counter_calls() - calls
            if pass > 0 { best = min(best, seconds) }
        }
        return ("await cache.image + withPixels (async)", best, allocations)
    }

    /// The work a hit saves: the pipeline decoding the photo into one 150×150 member, from the
    /// JPEG and from the same picture saved as PNG (median of several, after a warm-up that starts
    /// libvips); then whole misses through the cache.
    static func decodes(hit: Double, cache: ImageCache, jpeg: Data) async throws {
        let png = Harness.scratch("cache-decode") + "/photo.png"
        try PipelineRuntime.withLibvips {
            guard let image = cvips_load_file(jpegPath) else { throw ImageTableError(.unreadable, "cannot load \(jpegPath)") }
            defer { g_object_unref(image) }
            guard cvips_pngsave(image, png) == 0 else { throw ImageTableError(.renderFailed, "cannot write \(png)") }
        }
        let renderer = ImageRenderer()
        let spec = TableFormat(name: "bench", width: 150, height: 150, style: .bgra32, capacity: 1)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 640 * 150, alignment: 64)
        defer { buffer.deallocate() }
        let target = RenderTarget(format: spec, pixels: buffer, bytesPerRow: 640)
        _ = try renderer.render(.file(jpegPath), into: [target])
        for (name, file, runs) in [("decode 150×150 from JPEG (1800×1200)", jpegPath, 15), ("decode 150×150 from PNG (same photo)", png, 7)] {
            var times = try (0..<runs).map { _ in try Harness.time { _ = try renderer.render(.file(file), into: [target]) } }
            times.sort()
            let median = times[runs / 2]
            Harness.report(name, String(format: "%.1f ms", median * 1e3), String(format: "%@× an async cache hit",
                                                                                   Harness.grouped(median / hit)))
        }
        // Misses end to end: provider (bytes in memory) → render pool → pipeline → publish → handle.
        var misses: [Double] = []
        for i in 0..<10 {
            let entity = CacheEntity(key: "miss/\(i)", sourceID: UUID())
            misses.append(try await timeAsync { _ = try await cache.image(for: entity, format: "bench") })
        }
        misses.sort()
        Harness.report("cache miss: fetch + decode + store (JPEG)", String(format: "%.1f ms", misses[5] * 1e3), "median of 10")
    }

    static func timeAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The corpus' first landscape photo (1800×1200), or the repository's sample without the corpus.
    static var jpegPath: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // CacheBench.swift, imagetable-bench, Benchmarks, repo
        let corpus = url.appendingPathComponent("shared/corpus/photos/Landscape_1.jpg").path
        return FileManager.default.fileExists(atPath: corpus) ? corpus : FileManager.default.currentDirectoryPath + "/samples/landscape.jpg"
    }
}

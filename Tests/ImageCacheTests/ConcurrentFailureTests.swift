import Foundation
@testable import ImageCache
import ImageCacheVips
import ImageTableCore
import TestSupport
import Testing

/// Many requests at once, on several render threads, for entities whose sources fail (PngSuite's
/// damaged files, a PPM, a truncated PNG, a header too large, no bytes, a provider that throws)
/// or succeed (sound PNGs, a photo, a JPEG that libjpeg warns of, which the cache's renderer
/// sends through libvips): each request gets its own source's error, the one the same request
/// gets with one render thread and nothing beside it (code, message, cause, path, key).
///
/// libvips' error buffer is the process's; without the pipeline's `LibvipsGate`, a corrupt
/// PNG's request failed with no cause or with a JPEG's warning, and a PPM's carried a PNG's
/// words (18–30 of 400 outcomes, from a review). Failures are not remembered, and leave no
/// fetch place, render job or slot behind.
@Suite struct ConcurrentFailureTests {
    /// A PNG whose IHDR says 100,000 × 100,000, its checksums right: refused from the header.
    static var hugePNG: Data {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return be32(UInt32(data.count)) + body + be32(CRC32.checksum(body))
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
        return Data(signature + chunk("IHDR", be32(100_000) + be32(100_000) + [8, 2, 0, 0, 0]) + chunk("IDAT", idat) + chunk("IEND", []))
    }

    /// Each source by the name its entities' keys start with; `nil` makes the provider throw.
    static func sources() throws -> [String: SourceImage?] {
        var sources: [String: SourceImage?] = [:]
        for path in Corpus.pngSuiteFiles {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            if name.hasPrefix("x") || ["basn2c08", "basn6a16", "basi0g04", "tbrn2c08"].contains(name) { sources[name] = .file(path) }
        }
        var ppm = Array("P6\n4 4\n255\n".utf8)
        ppm += [UInt8](repeating: 200, count: 4 * 4 * 3)
        sources["ppm"] = .data(Data(ppm), name: "grey.ppm")
        let png = try Data(contentsOf: URL(fileURLWithPath: Corpus.png("basn2c08")))
        sources["truncated-png"] = .data(png.prefix(png.count * 6 / 10), name: "truncated.png")
        sources["huge-png"] = .data(hugePNG, name: "huge.png")
        sources["no-bytes"] = .data(Data(), name: "none.png")
        sources["provider-fails"] = .some(nil)
        let photo = try Data(contentsOf: URL(fileURLWithPath: Corpus.photo("Landscape_1")))
        sources["photo"] = .data(photo, name: "photo.jpg")
        // libjpeg warns of this one, so the direct JPEG path declines it and libvips decodes it.
        var junk = photo
        junk.insert(contentsOf: [0x12, 0x34, 0x56], at: try #require(junk.firstRange(of: Data([0xFF, 0xDB]))).lowerBound)
        sources["junk-jpeg"] = .data(junk, name: "junk.jpg")
        return sources
    }

    /// A request's outcome as text that compares whole, its key written `KEY`.
    static func outcome(_ cache: ImageCache, key: String, format: String) async -> String {
        do throws(ImageTableError) {
            let image = try await cache.image(for: CacheEntity(key: key, sourceName: "1"), format: format)
            return image.isCurrent ? "ok" : "ok, not current"
        } catch {
            return "\(error.code.rawValue) | \(error.message) | cause: \(error.cause ?? "-") | path: \(error.path ?? "-") | key: \(error.key ?? "-")"
                .replacingOccurrences(of: key, with: "KEY")
        }
    }

    static let formats = [
        TableFormat(name: "small", family: "photos", width: 32, height: 32, style: .bgra32, capacity: 500),
        TableFormat(name: "grey", family: "photos", width: 24, height: 16, style: .grayscale8, capacity: 500, rendering: RenderingOptions(fit: .inside)),
    ]

    /// A cache whose provider serves `name#anything` from `sources[name]` (and fails for the
    /// rest), with the pipeline's renderer.
    static func fixture(_ sources: [String: SourceImage?], keys: [String], renderThreads: Int) throws -> Fixture {
        let provider = TestProvider()
        for key in keys {
            if let source = sources[String(key.prefix { $0 != "#" })], let source { provider.set(key, source) }
        }
        return try Fixture(provider: provider, formats: formats) {
            $0.renderThreads = renderThreads
            $0.maximumConcurrentFetches = 16
        }
    }

    @Test func eachRequestGetsItsOwnSourcesErrorOnEveryRenderThread() async throws {
        let sources = try Self.sources()
        let names = sources.keys.sorted()
        let rounds = 16

        // Alone: one render thread, one request at a time.
        let single = try Self.fixture(sources, keys: names.map { "\($0)#alone" }, renderThreads: 1)
        var expected: [String: String] = [:]
        for name in names { expected[name] = await Self.outcome(single.cache, key: "\(name)#alone", format: "small") }
        // What an app is told, by kind of source.
        #expect(expected["xcsn0g01"]?.hasPrefix("decode-failed | could not decode | cause: vipspng: libpng read error | path: \(Corpus.png("xcsn0g01"))") == true,
                "\(expected["xcsn0g01"] ?? "")")
        #expect(expected["ppm"] == "unsupported-format | not an image in a format this pipeline decodes | cause: ppmload_source: operation is blocked | path: grey.ppm | key: KEY")
        #expect(expected["truncated-png"]?.hasPrefix("truncated | the image data ends early | cause: vipspng: libpng read error") == true,
                "\(expected["truncated-png"] ?? "")")
        #expect(expected["huge-png"]?.hasPrefix("too-many-pixels") == true && expected["no-bytes"]?.hasPrefix("empty") == true)
        #expect(expected["provider-fails"] == "source-unavailable | the source provider failed | cause: the test provider was told to fail | path: - | key: KEY")
        for name in ["basn2c08", "basn6a16", "basi0g04", "tbrn2c08", "photo", "junk-jpeg"] { #expect(expected[name] == "ok", "\(name): \(expected[name] ?? "")") }

        // At once: four render threads, every source in every round, each request its own entity.
        let keys = (0..<rounds).flatMap { r in names.map { "\($0)#\(r)" } }
        let fixture = try Self.fixture(sources, keys: keys, renderThreads: 4)
        let cache = fixture.cache
        let alone = expected
        let wrong = await withTaskGroup(of: String?.self) { group in
            for (i, key) in keys.shuffled().enumerated() {
                group.addTask {
                    let name = String(key.prefix { $0 != "#" })
                    let got = await Self.outcome(cache, key: key, format: i % 2 == 0 ? "small" : "grey")
                    return got == alone[name] ? nil : "\(name): \(got) (alone: \(alone[name] ?? ""))"
                }
            }
            var wrong: [String] = []
            for await outcome in group { if let outcome { wrong.append(outcome) } }
            return wrong
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(keys.count) outcomes differ from the request made alone, such as \(wrong.prefix(3))")

        // Nothing is remembered as bad: the same entity again calls the provider again, and fails the same way.
        let calls = fixture.provider.calls
        let again = await Self.outcome(cache, key: "xcsn0g01#0", format: "small")
        #expect(fixture.provider.calls == calls + 1 && again == expected["xcsn0g01"])

        // Nothing is left behind: no fetch place, no queued render, no entry or slot for a failure.
        #expect(await eventually { cache.fetchLimiter.runningCount == 0 && cache.fetchLimiter.waitingCount == 0 && cache.pool.queuedCount == 0 })
        let good = expected.values.count { $0 == "ok" }
        #expect(cache.tables["small"]?.table.count == good * rounds && cache.tables["grey"]?.table.count == good * rounds)
        // A key whose source failed takes a sound one (a new version) in every format.
        fixture.provider.set("xcsn0g01#0", .file(Corpus.png("basn2c08")))
        let fixed = CacheEntity(key: "xcsn0g01#0", sourceName: "2")
        #expect(try await cache.image(for: fixed, format: "small").isCurrent)
        #expect(try cache.containsImage(for: fixed, format: "grey"))
    }
}

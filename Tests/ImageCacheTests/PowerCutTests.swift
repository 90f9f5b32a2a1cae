import Foundation
import ImageCache
import ImageTableCore
import TestSupport
import Testing

/// A cache publishes without flushing (`processCrashOnly`), so a power cut can leave a committed
/// record on disk over pixels it never described: an evicted entry's. Such an entry passes every
/// check of its record and matches its source ID; served, it is another entity's image, for good.
@Suite struct PowerCutTests {
    static let format = Fixture.formats[0]

    /// A table holding "a" and "b" with distinct pixels, then "b"'s pixels copied over "a"'s
    /// slot, as a power cut leaves a reused slot whose new pixels never reached the disk.
    static func tableWithStalePixels(in directory: String, a: CacheEntity, b: CacheEntity) throws -> [UInt8] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + format.fileName
        let table = try ImageTableWriter(path: path, format: format)
        let l = table.layout
        var slots: [Int] = []
        for (seed, entity) in [a, b].enumerated() {
            let bytes = HitTests.pattern(l, seed: seed + 1)
            let slot = try bytes.withUnsafeBytes { raw in
                try table.write(key: entity.key, sourceUUID: entity.sourceID, pixels: raw,
                                contentRect: PixelRect(x: 0, y: 0, width: l.width, height: l.height)).slot
            }
            slots.append(slot)
        }
        table.close()
        let bPixels = HitTests.pattern(l, seed: 2)
        let fd = open(path, O_WRONLY)
        defer { close(fd) }
        let written = bPixels.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(l.slotOffset(slots[0]))) }
        #expect(written == bPixels.count)
        return bPixels
    }

    @Test func anEntryWhosePixelsAreAnotherEntrysIsAMissAndIsDrawnAgain() async throws {
        let directory = NSTemporaryDirectory() + "imagecache-\(UUID().uuidString)"
        let a = CacheEntity(key: "a", sourceName: "v1"), b = CacheEntity(key: "b", sourceName: "v1")
        let bPixels = try Self.tableWithStalePixels(in: directory, a: a, b: b)
        let fixture = try Fixture(provider: TestProvider(["a": .photo("Landscape_1")]), formats: [Self.format], directory: directory)
        let cache = fixture.cache

        // Not a hit with b's pixels, by any of the cache's reads.
        #expect(try cache.cachedImage(for: a, format: Self.format.id) == nil)
        #expect(try cache.withCachedPixels(for: a, format: Self.format.id) { Array($0.bytes) } == nil)
        #expect(try cache.containsImage(for: a, format: Self.format.id) == false)
        // b's own entry is sound, and served.
        #expect(try cache.withCachedPixels(for: b, format: Self.format.id) { Array($0.bytes) } == bPixels)

        // Asked for, a is fetched and drawn again, into its slot.
        let image = try await cache.image(for: a, format: Self.format.id)
        let drawn = try #require(image.copyPixels())
        let drawnIsB = drawn == bPixels
        #expect(!drawnIsB, "a drawn, not b's pixels kept")
        #expect(fixture.provider.calls == 1)
        #expect(try cache.withCachedPixels(for: a, format: Self.format.id) { Array($0.bytes) } == drawn)
    }
}

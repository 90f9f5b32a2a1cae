import Foundation
import TestSupport
import Testing

/// The ImageCache product depends on the table core alone: an app that renders with its own
/// decoders loads neither libvips (about 42 ms and a hundred libraries at start) nor libyaml.
@Suite struct LinkageTests {
    static var probe: String { Products.directory + "/CacheProbe" }

    @Test func aConsumerOfImageCacheRunsWithItsOwnRenderer() throws {
        let result = try run(Self.probe, [])
        #expect(result.status == 0 && result.stdout == "ok\n", "\(result.stdout)\(result.stderr)")
    }

    @Test func itLinksNeitherLibvipsNorAYAMLParser() throws {
        let libraries = try run("/usr/bin/ldd", [Self.probe])
        #expect(libraries.status == 0)
        #expect(!libraries.stdout.contains("vips") && !libraries.stdout.contains("glib") && !libraries.stdout.contains("yaml"),
                "\(libraries.stdout)")
        let symbols = try run("/usr/bin/nm", ["-C", Self.probe])
        #expect(symbols.status == 0 && !symbols.stdout.isEmpty)
        for name in ["vips_", "yaml_parser", "Yams", "ImagePipeline", "ImageManifest"] {
            #expect(!symbols.stdout.contains(name), "\(name) is linked into a consumer of ImageCache")
        }
    }
}

// swift-tools-version:6.2
import PackageDescription

// Everything beyond the table core and the runtime cache needs system libraries (libvips, libjpeg,
// libyaml, SQLite) and ArgumentParser. SwiftPM resolves every package dependency of a package and
// asks pkg-config about every system library its products reach, whether the consumer uses them
// or not, so a consumer of ImageTableCore alone would fetch ArgumentParser and see vips.pc's
// "prohibited flag(s): -pthread". The trait `Baking` (on by default) guards those edges: a
// consumer that depends on this package with `traits: []` resolves nothing else and asks
// pkg-config about nothing; the core, the cache and their consumers build as ever.
let baking: TargetDependencyCondition? = .when(traits: ["Baking"])


let package = Package(
    name: "ImageTables",
    // Synchronization's Mutex and Atomic: macOS 15, iOS 18 and their siblings (without the iOS
    // line, SwiftPM built for an older iOS, where the runtime cache did not compile).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ImageTableCore", targets: ["ImageTableCore"]),
        .library(name: "ImageManifest", targets: ["ImageManifest"]),
        .library(name: "ImagePipeline", targets: ["ImagePipeline"]),
        .library(name: "ImageCache", targets: ["ImageCache"]),
        .library(name: "ImageCacheVips", targets: ["ImageCacheVips"]),
        .executable(name: "imagetable", targets: ["imagetable"]),
        .executable(name: "imagetable-worker", targets: ["imagetable-worker"]),
    ],
    traits: [
        .trait(name: "Baking", description: "The manifest, pipeline, bake and tools: libvips, libjpeg, libyaml, SQLite, ArgumentParser."),
        .default(enabledTraits: ["Baking"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // Cross-process atomics on mapped memory; Swift's own atomics cannot address an mmap.
        .target(name: "CTableSupport", path: "Sources/CTableSupport"),
        // SHA-1 and CRC-32 on the CPU's own instructions (SHA-NI, PCLMULQDQ), for checksums.
        .target(name: "CChecksums", path: "Sources/CChecksums"),
        .target(name: "ImageTableCore", dependencies: ["CTableSupport", "CChecksums"]),
        // The messages and the channel between a command and its worker process: Foundation only,
        // so the worker links neither the manifest parser nor the bake.
        .target(name: "WorkerProtocol"),
        // libyaml's event API, for the manifest's composer (positions, styles, tags, anchors).
        .systemLibrary(name: "CLibYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
        .target(name: "ImageManifest", dependencies: ["ImageTableCore", .target(name: "CLibYAML", condition: baking)]),
        // libvips, opened at run time on the first image that needs it (a process that decodes
        // only plain JPEGs never loads it): no libvips headers or library at build time.
        .target(name: "CVips", path: "Sources/CVips", exclude: ["table.h"]),
        // libvips linked directly, for the tests' and benchmarks' references made by libvips itself.
        .systemLibrary(name: "CLibvips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        // libjpeg(-turbo) for the direct JPEG path; it comes with libvips-dev.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg-dev"])]),
        // The direct path's pixel loops (resampling in fixed point, packing into styles), with vector versions chosen at run time.
        .target(name: "CPixels", path: "Sources/CPixels"),
        // lcms2, opened at run time: the direct path's colour management of JPEGs with a profile.
        .target(name: "CColour", path: "Sources/CColour"),
        .target(name: "ImagePipeline", dependencies: [.target(name: "CVips", condition: baking), .target(name: "CJPEG", condition: baking),
                                                     "CColour", "CPixels", "ImageTableCore"]),
        // SQLite, for the bake state.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // Scan, state, plan and worker processes: manifest + protocol + core, no libvips.
        .target(name: "ImageBake", dependencies: ["ImageTableCore", "ImageManifest", "WorkerProtocol", .target(name: "CSQLite", condition: baking),
                                                 "CTableSupport", "CChecksums"]),
        // The runtime cache: the core alone, so an app that renders with its own decoders links
        // neither libvips nor a YAML parser.
        .target(name: "ImageCache", dependencies: ["ImageTableCore"]),
        // The cache's libvips renderer and its configuration from a manifest.
        .target(name: "ImageCacheVips", dependencies: ["ImageCache", "ImagePipeline", "ImageManifest", "ImageTableCore"]),
        // The CLI does not link libvips: commands that touch no pixels start in milliseconds.
        .executableTarget(
            name: "imagetable",
            dependencies: [
                "ImageTableCore", "ImageManifest", "ImageBake", "WorkerProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: baking),
            ]
        ),
        // The pixel work: bake jobs from `imagetable bake`, one process per job slot.
        .executableTarget(name: "imagetable-worker", dependencies: ["ImagePipeline", "ImageTableCore", "CTableSupport", "WorkerProtocol"]),
        // Helpers every test target shares: temporary directories, the corpus, the built
        // products, running them.
        .target(name: "TestSupport", dependencies: ["ImageTableCore", "CTableSupport"], path: "Tests/TestSupport"),
        // A consumer of the ImageCache product alone, which the tests check links no libvips.
        .executableTarget(name: "CacheProbe", dependencies: ["ImageCache", "ImageTableCore"], path: "Tests/CacheProbe"),
        // Child processes for the kill, two-process and full-disk tests; not a product.
        .executableTarget(name: "ImageTableFixture", dependencies: ["ImageTableCore"], path: "Tests/Fixture"),
        .testTarget(name: "ImageTableCoreTests", dependencies: ["TestSupport", "ImageTableCore", "ImageTableFixture"]),
        // Depends on the CLI so that its binary is built for the tests that run it; the corpus
        // is read from the source tree, not bundled.
        .testTarget(name: "ImageManifestTests", dependencies: ["TestSupport", "ImageManifest", "imagetable"], exclude: ["Corpus"]),
        .testTarget(name: "ImagePipelineTests", dependencies: ["TestSupport", "ImagePipeline", "ImageTableCore", "CVips", "CLibvips"]),
        // Depends on the bake and its worker so that a bake in the tests can make tables for the cache.
        .testTarget(name: "ImageCacheTests", dependencies: ["TestSupport", "ImageCache", "ImageCacheVips", "ImagePipeline", "ImageBake",
                                                            "imagetable-worker", "CacheProbe"]),
        .testTarget(name: "WorkerProtocolTests", dependencies: ["TestSupport", "WorkerProtocol", "imagetable-worker"]),
        .testTarget(name: "ImageBakeTests", dependencies: ["TestSupport", "ImageBake", "WorkerProtocol", "imagetable", "imagetable-worker"]),
        // Runs the built `imagetable` and `imagetable-worker` on tables written with the core;
        // decodes the PNGs they write with libvips (CLibvips) to check the pixels.
        .testTarget(name: "ImagetableToolsTests",
                    dependencies: ["TestSupport", "ImageTableCore", "ImagePipeline", "CLibvips", "imagetable", "imagetable-worker"]),
        .target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"),
        .executableTarget(
            name: "imagetable-bench",
            dependencies: ["ImageTableCore", "CMallocCounter", "ImageCache", "ImageCacheVips", "ImagePipeline", "CLibvips", "WorkerProtocol"],
            path: "Benchmarks/imagetable-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make docs` alone adds the DocC plugin (and builds in a scratch directory of its own), so that
// `make test`, CI and every consumer of the package resolve and build exactly what they did.
if Context.environment["IMAGETABLES_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/apple/swift-docc-plugin", exact: "1.5.0"))
}

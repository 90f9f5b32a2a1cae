// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ImageTables",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ImageTableCore", targets: ["ImageTableCore"]),
        .library(name: "ImageManifest", targets: ["ImageManifest"]),
        .library(name: "ImagePipeline", targets: ["ImagePipeline"]),
        .library(name: "ImageCache", targets: ["ImageCache"]),
        .executable(name: "imagetable", targets: ["imagetable"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        // Cross-process atomics on mapped memory; Swift's own atomics cannot address an mmap.
        .target(name: "CTableSupport", path: "Sources/CTableSupport"),
        .target(name: "ImageTableCore", dependencies: ["CTableSupport"]),
        .target(name: "ImageManifest", dependencies: ["ImageTableCore", .product(name: "Yams", package: "Yams")]),
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .target(name: "ImagePipeline", dependencies: ["CVips", "ImageTableCore"]),
        // Bake planning, source discovery and worker processes: manifest + pipeline + core.
        .target(name: "ImageBake", dependencies: ["ImageTableCore", "ImageManifest", "ImagePipeline"]),
        .target(name: "ImageCache", dependencies: ["ImageTableCore", "ImagePipeline", "ImageManifest"]),
        .executableTarget(
            name: "imagetable",
            dependencies: [
                "ImageTableCore", "ImageManifest", "ImagePipeline", "ImageBake",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Child processes for the kill, two-process and full-disk tests; not a product.
        .executableTarget(name: "ImageTableFixture", dependencies: ["ImageTableCore"], path: "Tests/Fixture"),
        .testTarget(name: "ImageTableCoreTests", dependencies: ["ImageTableCore", "ImageTableFixture"]),
        // Depends on the CLI so that its binary is built for the tests that run it; the corpus
        // is read from the source tree, not bundled.
        .testTarget(name: "ImageManifestTests", dependencies: ["ImageManifest", "imagetable"], exclude: ["Corpus"]),
        .testTarget(name: "ImagePipelineTests", dependencies: ["ImagePipeline", "ImageTableCore", "CVips"]),
        .testTarget(name: "ImageCacheTests", dependencies: ["ImageCache"]),
        .testTarget(name: "ImageBakeTests", dependencies: ["ImageBake", "imagetable"]),
        .target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"),
        .executableTarget(
            name: "imagetable-bench",
            dependencies: ["ImageTableCore", "CMallocCounter"],
            path: "Benchmarks/imagetable-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)

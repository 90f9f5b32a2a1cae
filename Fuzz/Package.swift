// swift-tools-version:5.4
// The fuzz targets of `make fuzz`, a package of their own: with tools-version 5.5 or later,
// SwiftPM fails to link an executable built with `-sanitize=fuzzer` (it adds its own `main`);
// 5.4 links it. Each target is libFuzzer's `LLVMFuzzerTestOneInput` over one of the main
// package's libraries. Build and run them with `make fuzz` (scripts/fuzz.sh), not by hand.
import PackageDescription

let package = Package(
    name: "ImageTablesFuzz",
    dependencies: [.package(name: "ImageTables", path: "..")],
    targets: [
        // Tables: open, verify, read every entry's pixels.
        .executableTarget(name: "FuzzTableReader", dependencies: [.product(name: "ImageTableCore", package: "ImageTables")]),
        // Manifests: parse and validate, with every check.
        .executableTarget(name: "FuzzManifest", dependencies: [.product(name: "ImageManifest", package: "ImageTables")]),
        // Sources: a render into the four styles (the direct JPEG path) and every reader of a
        // source's structure; libvips is never loaded.
        .executableTarget(name: "FuzzSourceBytes", dependencies: [.product(name: "ImagePipeline", package: "ImageTables"),
                                                                   .product(name: "ImageTableCore", package: "ImageTables")]),
    ]
)

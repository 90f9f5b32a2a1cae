#!/usr/bin/env bash
# Builds a package that depends on the ImageCache product alone, with pkg-config unable to find
# libvips (PKG_CONFIG_LIBDIR points at an empty directory), runs it, and checks that the binary
# links neither libvips nor GLib nor libyaml. CI runs it after `make test`; it takes about a
# minute (the core and the cache are compiled again in a scratch package).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/consumer/Sources/consumer" "$work/no-pkgconfig"
cat > "$work/consumer/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$repo")],
    targets: [.executableTarget(name: "consumer", dependencies: [
        .product(name: "ImageCache", package: "$(basename "$repo")"),
        .product(name: "ImageTableCore", package: "$(basename "$repo")"),
    ])]
)
SWIFT
cp "$repo/Tests/CacheProbe/main.swift" "$work/consumer/Sources/consumer/main.swift"
cd "$work/consumer"
PKG_CONFIG_LIBDIR="$work/no-pkgconfig" PKG_CONFIG_PATH= swift build --product consumer 2>&1 | tail -3
binary=$(swift build --show-bin-path)/consumer
"$binary"
if ldd "$binary" | grep -E 'vips|glib|yaml'; then
    echo "check-cache-without-libvips: the ImageCache consumer links libvips, GLib or libyaml" >&2
    exit 1
fi
echo "check-cache-without-libvips: ImageCache builds and runs without libvips or libyaml"

#!/usr/bin/env bash
# Builds a package that depends on the ImageCache and ImageTableCore products alone, as the README
# tells such a consumer to (`traits: []`), with pkg-config unable to find libvips or any other
# library (PKG_CONFIG_LIBDIR points at an empty directory), runs it, and checks that:
#   - it resolves no package but this one (no ArgumentParser),
#   - its build prints no warning (SwiftPM asks pkg-config about no system library: no
#     "prohibited flag(s): -pthread" from vips.pc, no "couldn't find pc file"),
#   - the binary links neither libvips nor GLib nor libyaml.
# CI runs it after `make test`; it takes about a minute (the core and the cache are compiled
# again in a scratch package).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/consumer/Sources/consumer" "$work/no-pkgconfig"
cat > "$work/consumer/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$repo", traits: [])],
    targets: [.executableTarget(name: "consumer", dependencies: [
        .product(name: "ImageCache", package: "$(basename "$repo")"),
        .product(name: "ImageTableCore", package: "$(basename "$repo")"),
    ])]
)
SWIFT
cp "$repo/Tests/CacheProbe/main.swift" "$work/consumer/Sources/consumer/main.swift"
cd "$work/consumer"
PKG_CONFIG_LIBDIR="$work/no-pkgconfig" PKG_CONFIG_PATH= swift build --product consumer > "$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; exit 1; }
tail -1 "$work/build.log"
if grep -i 'warning' "$work/build.log"; then
    echo "check-cache-without-libvips: building a consumer of the core and the cache printed warnings" >&2
    exit 1
fi
others=$(swift package show-dependencies --format flatlist 2>/dev/null | grep -v -x "$(basename "$repo" | tr 'A-Z' 'a-z')" || true)
if [ -n "$others" ]; then
    echo "check-cache-without-libvips: a consumer of the core and the cache resolves other packages: $others" >&2
    exit 1
fi
binary=$(swift build --show-bin-path)/consumer
"$binary"
if ldd "$binary" | grep -E 'vips|glib|yaml'; then
    echo "check-cache-without-libvips: the ImageCache consumer links libvips, GLib or libyaml" >&2
    exit 1
fi
echo "check-cache-without-libvips: ImageCache builds and runs without libvips or libyaml, resolving nothing else and warning of nothing"

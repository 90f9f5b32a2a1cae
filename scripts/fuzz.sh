#!/usr/bin/env bash
# `make fuzz`, and CI's fuzz smoke (.ci/run, 30 s per target after `make test`): builds the
# libFuzzer targets of Fuzz/ and runs each, one after the other, for SECONDS (default 180).
#
#   scripts/fuzz.sh [SECONDS]
#
# What it needs is what the build needs (scripts/ensure-deps.sh, run first, installs it with
# apt-get when missing and run as root) and the libFuzzer runtime that swift.org's Linux
# toolchains ship (lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a, checked below). The targets are
# a package of their own (Fuzz/, tools-version 5.4: later versions fail to link a fuzz target),
# built in release with `swiftc -sanitize=fuzzer,address`: AddressSanitizer stops a target at a
# read or write outside memory it may touch, as a crash, in our Swift and C alike.
#
# Targets and their seeds (libFuzzer reads every corpus directory; new inputs go to the first,
# bench-out/fuzz/<target>, kept between runs so coverage accumulates):
#   FuzzTableReader  Fuzz/Corpus/tables (a table of each style)           open, verify, read every entry
#   FuzzManifest     manifests/, Tests/ImageManifestTests/Corpus,          parse and validate
#                    Fuzz/Corpus/manifests (inputs that once failed)
#   FuzzSourceBytes  Fuzz/Corpus/sources (small JPEGs of each kind,        render into the four styles
#                    PNG, GIF, WebP, TIFF)                                 (direct JPEG path), every
#                                                                          structure reader; no libvips
# A crash, a hang over 10 s for one input or more than 2 GiB of memory stops a target and leaves
# the input in bench-out/fuzz/ (add it to the target's corpus once fixed); the script then exits 1.
# The seeds run first, so an input of the committed corpus that crashes fails at once. The last
# lines are one per target: executions, executions per second, crashes, coverage, seconds.
set -euo pipefail
seconds=${1:-180}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/bench-out/fuzz"
export SWIFT_BACKTRACE=enable=no
"$root/scripts/ensure-deps.sh"

if [ "$(uname -s)" = Linux ]; then
    toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")
    if ! compgen -G "$toolchain/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null \
        && ! compgen -G "$toolchain/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null; then
        echo "fuzz: this Swift toolchain ($toolchain) has no libFuzzer runtime (libclang_rt.fuzzer);" >&2
        echo "  use a swift.org toolchain (https://www.swift.org/install/linux/)" >&2
        exit 1
    fi
fi

mkdir -p "$work"
cd "$root/Fuzz"
# SwiftPM keeps the plan of a path dependency's files from the last build, so a file added to the
# main package would fail an incremental build of Fuzz/ ("cannot find ... in scope"); without its
# build manifest it plans again (a second), and recompiles only what changed.
rm -f .build/release.yaml
if ! swift build -c release -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xswiftc -parse-as-library \
    >"$work/build.log" 2>&1; then
    grep -E "error|warning: [^p]" "$work/build.log" | head -20 >&2 || tail -20 "$work/build.log" >&2
    echo "fuzz: the targets did not build (the whole log: $work/build.log)" >&2
    exit 1
fi
bin="$root/Fuzz/.build/release"

status=0
summary=()
run() {
    local target=$1; shift
    mkdir -p "$work/$target"
    local log="$work/$target.log" marker="$work/.$target.started"
    touch "$marker"
    local start=$SECONDS
    if "$bin/$target" "$work/$target" "$@" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$target-" >"$log" 2>&1; then
        :
    else
        status=1
        echo "fuzz: $target failed; the input and its log are in $work/" >&2
        grep -E "Fatal error|ERROR|SUMMARY" "$log" | head -5 >&2 || true
    fi
    local runs rate cov crashes
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1 | cut -d' ' -f2)
    # The inputs this run left: libFuzzer stops at the first, so 0 or 1.
    crashes=$(find "$work" -maxdepth 1 -name "$target-*" -newer "$marker" | wc -l)
    summary+=("fuzz: $target: ${runs:-0} executions in $((SECONDS - start)) s, ${rate:-0}/s, $crashes crashes, coverage ${cov:-0} edges, $(ls "$work/$target" | wc -l) inputs in the corpus")
}
run FuzzTableReader "$root/Fuzz/Corpus/tables"
run FuzzManifest "$root/manifests" "$root/Tests/ImageManifestTests/Corpus" "$root/Fuzz/Corpus/manifests"
run FuzzSourceBytes "$root/Fuzz/Corpus/sources"
printf '%s\n' "${summary[@]}"
exit $status

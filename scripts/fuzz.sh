#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of Fuzz/ and runs each for SECONDS (default 180).
#
#   scripts/fuzz.sh [SECONDS]
#
# Targets and their seeds (libFuzzer reads every corpus directory; new inputs go to the first,
# bench-out/fuzz/<target>, kept between runs so coverage accumulates):
#   FuzzTableReader  Fuzz/Corpus/tables (a table of each style)      open, verify, read every entry
#   FuzzManifest     manifests/, Tests/ImageManifestTests/Corpus     parse and validate
# A crash, a hang over 10 s for one input or more than 2 GiB of memory stops a target and leaves
# the input in bench-out/fuzz/; the script then exits 1. The last lines are one per target:
# executions, executions per second, coverage. CI runs it for 30 s per target.
set -euo pipefail
seconds=${1:-180}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/bench-out/fuzz"
export SWIFT_BACKTRACE=enable=no
cd "$root/Fuzz"
swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library 2>&1 | grep -vE "^\[|^Build|Compiling|Write|Linking|prohibited flag" || true
bin="$root/Fuzz/.build/release"
[ -x "$bin/FuzzTableReader" ] && [ -x "$bin/FuzzManifest" ] || { echo "fuzz: the targets did not build" >&2; exit 1; }

status=0
summary=()
run() {
    local target=$1; shift
    mkdir -p "$work/$target"
    local log="$work/$target.log"
    if "$bin/$target" "$work/$target" "$@" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$target-" >"$log" 2>&1; then
        :
    else
        status=1
        echo "fuzz: $target failed; the input and its log are in $work/" >&2
        grep -E "Fatal error|ERROR|SUMMARY" "$log" | head -5 >&2 || true
    fi
    local runs rate cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1 | cut -d' ' -f2)
    summary+=("fuzz: $target: ${runs:-0} executions in ${seconds} s, ${rate:-0}/s, coverage ${cov:-0} edges, $(ls "$work/$target" | wc -l) inputs in the corpus")
}
run FuzzTableReader "$root/Fuzz/Corpus/tables"
run FuzzManifest "$root/manifests" "$root/Tests/ImageManifestTests/Corpus"
printf '%s\n' "${summary[@]}"
exit $status

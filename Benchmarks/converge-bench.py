#!/usr/bin/env python3
"""The converging-bake benchmark of `make bench`: what a re-bake costs next to the full bake, all
in this one script, so the figures are ratios.

    python3 Benchmarks/converge-bench.py [--bin .build/release] [--sources 2000]

Sources: crops and re-encodes of ../shared/corpus/photos (made once, kept in bench-out/bake-src,
shared with bake-bench.py). Formats: FastImageCache's demo family, four 150x150 formats.
Measured, each the median of 3 runs:
  full       a bake into an empty output directory (no tables, no state)
  unchanged  a re-bake over the same files: one stat per source, no read
  1%         a re-bake after 1% of the sources got new bytes
and, once, the files the unchanged re-bake opens under the sources directory (strace -f), and the
bake state's size per source.
"""
import argparse, os, shutil, statistics, subprocess, sys, time

sys.dont_write_bytecode = True
from benchlib import bake_bench
HERE = os.path.dirname(os.path.abspath(__file__))

ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "bench-out", "converge")


def bake(binary, manifest):
    started = time.perf_counter()
    subprocess.run([binary, "bake", manifest, "--allow-outside-paths", "--no-progress"], check=True, capture_output=True)
    return time.perf_counter() - started


def opened_sources(binary, manifest, sources):
    """Regular files under `sources` that a bake opens, counted from strace -f."""
    log = os.path.join(OUT, "strace.log")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, binary, "bake", manifest,
                    "--allow-outside-paths", "--no-progress"], check=True, capture_output=True)
    count = 0
    with open(log) as f:
        for line in f:
            if "O_DIRECTORY" in line or "= -1" in line:
                continue
            start = line.find('"')
            if start >= 0 and line[start + 1:].startswith(sources + "/"):
                count += 1
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--sources", type=int, default=2000)
    args = parser.parse_args()
    binary = os.path.join(os.path.abspath(args.bin), "imagetable")
    made = bake_bench.make_sources(args.sources)
    # A directory of its own, with every file last modified well in the past.
    sources = os.path.join(OUT, "src")
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(sources)
    for path in made:
        target = os.path.join(sources, os.path.basename(path))
        shutil.copyfile(path, target)
        os.utime(target, (time.time() - 3600, time.time() - 3600))
    tables = os.path.join(OUT, "tables")
    manifest = os.path.join(OUT, "bench.yaml")
    formats = "".join(f"      s{i}:\n        size: 150x150\n        style: {style}\n        maximumCount: {args.sources}\n"
                      for i, style in enumerate(bake_bench.STYLES))
    with open(manifest, "w") as f:
        f.write(f"version: 1\noutput: {tables}\nfamilies:\n  photos:\n    sources: {sources}\n    formats:\n{formats}")
    changed = sorted(os.listdir(sources))[:: 100][: max(1, args.sources // 100)]

    full, unchanged, one_percent = [], [], []
    for _ in range(3):
        shutil.rmtree(tables, ignore_errors=True)
        full.append(bake(binary, manifest))
        unchanged.append(bake(binary, manifest))
        # 1% of the sources get new bytes: each takes another source's.
        for i, name in enumerate(changed):
            donor = made[(i * 37 + 11) % len(made)]
            shutil.copyfile(donor, os.path.join(sources, name))
            os.utime(os.path.join(sources, name), (time.time() - 60, time.time() - 60))
        one_percent.append(bake(binary, manifest))
        for name in changed:
            shutil.copyfile(os.path.join(os.path.dirname(made[0]), name), os.path.join(sources, name))
            os.utime(os.path.join(sources, name), (time.time() - 3600, time.time() - 3600))
        bake(binary, manifest)
    opens = opened_sources(binary, manifest, sources) if shutil.which("strace") else None
    state = sum(os.path.getsize(os.path.join(tables, f)) for f in os.listdir(tables) if f.startswith(".imagetable-state"))

    f, u, p = statistics.median(full), statistics.median(unchanged), statistics.median(one_percent)
    print(f"Converging bakes: {args.sources} sources, four 150x150 formats, {os.cpu_count()} cores (median of 3)")
    print(f"  full bake                          {f:7.2f} s")
    print(f"  unchanged re-bake                  {u:7.3f} s   {100 * u / f:5.2f}% of the full bake (target <= 1%)")
    print(f"  re-bake after 1% changed ({len(changed):>3})    {p:7.3f} s   {100 * p / f:5.2f}% of the full bake (target <= 3%)")
    print(f"  source files the unchanged re-bake opens: {opens if opens is not None else 'n/a (no strace)'}")
    print(f"  bake state: {state / 1024:.0f} KiB, {state / args.sources:.0f} bytes per source")


if __name__ == "__main__":
    main()

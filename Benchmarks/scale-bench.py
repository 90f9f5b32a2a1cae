#!/usr/bin/env python3
"""The scale benchmark of `make bench`: a bake's peak memory as the sources grow, and a merge's
throughput against a plain copy of the same files, all run by this one script, so the figures
are ratios.

    python3 Benchmarks/scale-bench.py [--bin .build/release] [--sizes 10000,100000] [--merge 10000]
                                      [--merge-sizes 150,32] [--only-merge]

Sources: 180 crops (330x225) of the corpus photos, made once, then hard-linked under as many
names as needed (bench-out/scale-src-N; a bake reads each name as a file of its own). Formats: two
small ones, as a thumbnail cache of a large collection has (48x32 32BitBGRA, 64x64 8BitGrayscale).
  peak memory   the proportional resident size (PSS) of the bake's whole process tree, sampled
                every 10 ms, for a full bake, an unchanged re-bake, and a re-bake with one source
                in 180 changed (decoded again), at each size
  merge         4 shards of the --merge sources into one 150x150 32BitBGRA format (96 KiB
                slots), merged, then the same with 32x32 (4 KiB slots, where merge's work per
                entry shows; --merge-sizes); against `cp` of the four shard tables and a sync
                (the same pixels, and the shards' indexes); throughput is pixel megabytes a
                second for both
"""
import argparse, os, shutil, subprocess, sys, time

sys.dont_write_bytecode = True
from benchlib import bake_bench
HERE = os.path.dirname(os.path.abspath(__file__))

ROOT = os.path.dirname(HERE)
CORPUS = bake_bench.CORPUS
OUT = os.path.join(ROOT, "bench-out", "scale")
BASE = os.path.join(ROOT, "bench-out", "scale-base")


def base_sources():
    """180 small crops of the corpus photos, made once."""
    os.makedirs(BASE, exist_ok=True)
    made = sorted(os.listdir(BASE))
    if len(made) >= 180:
        return [os.path.join(BASE, f) for f in made[:180]]
    print("making 180 base crops (once)...", flush=True)
    photos = sorted(f for f in os.listdir(CORPUS) if f.endswith(".jpg"))
    for i in range(180):
        photo = photos[i % len(photos)]
        variant = i // len(photos)
        out = os.path.join(BASE, f"b{i:03d}.jpg")
        subprocess.run(["vips", "extract_area", os.path.join(CORPUS, photo), f"{out}[Q=80]",
                        str(variant * 61), str(variant * 37), "330", "225"], check=True)
    return [os.path.join(BASE, f"b{i:03d}.jpg") for i in range(180)]


def sources(count):
    """`count` names for the base crops, 1,000 a directory, made once."""
    root = os.path.join(ROOT, "bench-out", f"scale-src-{count}")
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return root
    shutil.rmtree(root, ignore_errors=True)
    base = base_sources()
    print(f"linking {count} sources in {root} (once)...", flush=True)
    for i in range(count):
        directory = os.path.join(root, f"d{i // 1000:04d}")
        os.makedirs(directory, exist_ok=True)
        os.link(base[i % len(base)], os.path.join(directory, f"f{i:07d}.jpg"))
    open(marker, "w").close()
    return root


def manifest(path, src, output, formats):
    with open(path, "w") as f:
        f.write(f"version: 1\noutput: {output}\nfamilies:\n  photos:\n    sources: {src}\n    formats:\n{formats}")
    return path


SMALL = ("      small: {size: 48x32, style: 32BitBGRA, maximumCount: 1000000}\n"
         "      grey: {size: 64x64, style: 8BitGrayscale, maximumCount: 1000000}\n")
LARGE = "      thumb: {{size: {0}x{0}, style: 32BitBGRA, maximumCount: {1}}}\n"


def changing_one_in_180(root, bake):
    """Runs `bake` with the names of one base crop in 180 (every source i with i % 180 == 0)
    linked to a copy of another crop, so they are decoded again, then links them back. One base
    crop's names alone: unlinking a name changes its file's ctime, which every other name of
    that file shares, so changing names spread over every crop would make every source's stat
    new to the bake state."""
    base = base_sources()
    other = os.path.join(ROOT, "bench-out", "scale-changed.jpg")
    if not os.path.exists(other):
        shutil.copyfile(base[1], other)
    names = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files
                   if f.endswith(".jpg") and int(f[1:-4]) % len(base) == 0)
    for target in (other, base[0]):
        for name in names:
            # rename() of one link of a file onto another leaves both: only a name not yet the target's.
            if not os.path.samefile(target, name):
                os.link(target, name + ".new")
                os.replace(name + ".new", name)
        if target == other:
            result = bake()
    return result


def peak_memory(imagetable, sizes):
    print(f"Bake peak memory (PSS of the process tree), two small formats, {os.cpu_count()} cores")
    print(f"  {'sources':>9} {'full bake s':>12} {'peak MB':>8} {'of it heap':>10}   {'re-bake s':>10} {'peak MB':>8} {'of it heap':>10}"
          f"   {'1/180 new':>10} {'peak MB':>8} {'of it heap':>10}")
    results = []
    for count in sizes:
        src = sources(count)
        out = bake_bench.fresh(os.path.join(OUT, f"bake-{count}"))
        m = manifest(os.path.join(out, "m.yaml"), src, "tables", SMALL)
        command = [imagetable, "bake", m, "--allow-outside-paths", "--no-progress"]
        full = bake_bench.run([command])
        again = bake_bench.run([command])
        changed = changing_one_in_180(src, lambda: bake_bench.run([command]))
        results.append((count, full, again, changed))
        print(f"  {count:>9,} {full[0]:12.1f} {full[1]:8.0f} {full[2]:10.0f}   {again[0]:10.2f} {again[1]:8.0f} {again[2]:10.0f}"
              f"   {changed[0]:10.2f} {changed[1]:8.0f} {changed[2]:10.0f}", flush=True)
        shutil.rmtree(out, ignore_errors=True)
    if len(results) > 1:
        (a, fa, ra, ca), (b, fb, rb, cb) = results[0], results[-1]
        print(f"  {b:,} vs {a:,} sources ({b / a:.0f}x): full bake peak {fb[1] / fa[1]:.2f}x, heap {fb[2] / fa[2]:.2f}x;"
              f" re-bake peak {rb[1] / ra[1]:.2f}x, heap {rb[2] / ra[2]:.2f}x;"
              f" one in 180 changed peak {cb[1] / ca[1]:.2f}x, heap {cb[2] / ca[2]:.2f}x")


def merge_throughput(imagetable, count, side=150, runs=3):
    src = sources(count)
    out = bake_bench.fresh(os.path.join(OUT, "merge"))
    m = manifest(os.path.join(out, "m.yaml"), src, "tables", LARGE.format(side, count))
    for k in range(4):
        subprocess.run([imagetable, "bake", m, "--allow-outside-paths", "--no-progress", "--shard", f"{k}/4",
                        "--output", os.path.join(out, f"shard-{k}")], check=True, capture_output=True)
    shards = [os.path.join(out, f"shard-{k}") for k in range(4)]
    tables = [os.path.join(s, "thumb.imagetable") for s in shards]
    pixel_bytes = count * side * -(-side * 4 // 64) * 64  # rows padded to 64 bytes, as in the tables
    file_bytes = sum(os.path.getsize(t) for t in tables)
    subprocess.run(["sync"], check=True)
    best_merge = best_copy = float("inf")
    for _ in range(runs):
        shutil.rmtree(os.path.join(out, "merged"), ignore_errors=True)
        subprocess.run(["sync"], check=True)
        started = time.perf_counter()
        subprocess.run([imagetable, "merge", os.path.join(out, "merged")] + shards, check=True, capture_output=True)
        best_merge = min(best_merge, time.perf_counter() - started)
        copies = bake_bench.fresh(os.path.join(out, "copies"))
        subprocess.run(["sync"], check=True)
        started = time.perf_counter()
        subprocess.run(["cp", "--sparse=always"] + tables[:1] + [os.path.join(copies, "0")], check=True)
        for k, t in enumerate(tables[1:], 1):
            subprocess.run(["cp", "--sparse=always", t, os.path.join(copies, str(k))], check=True)
        subprocess.run(["sync", "-f", copies], check=True)
        best_copy = min(best_copy, time.perf_counter() - started)
    print(f"Merge: 4 shards of {count:,} sources into one {side}x{side} 32BitBGRA table ({pixel_bytes / 1e6:.0f} MB of pixels)")
    print(f"  imagetable merge (checksums checked, flushed)  {best_merge:6.2f} s  {pixel_bytes / 1e6 / best_merge:7.0f} MB/s")
    print(f"  cp of the four shard tables, then sync          {best_copy:6.2f} s  {pixel_bytes / 1e6 / best_copy:7.0f} MB/s"
          f" (the same pixels, and the shards' indexes: {file_bytes / 1e6:.0f} MB of files)")
    print(f"  merge throughput vs copy: {best_copy / best_merge:.2f}x")
    shutil.rmtree(out, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--merge", type=int, default=10000)
    parser.add_argument("--merge-sizes", default="150,32",
                        help="the merged format's side in pixels, one merge each: 150 (96 KiB slots), 32 (4 KiB: merge's work per entry shows)")
    parser.add_argument("--only-merge", action="store_true", help="skip the peak memory part")
    args = parser.parse_args()
    imagetable = os.path.join(args.bin, "imagetable")
    if not args.only_merge:
        peak_memory(imagetable, [int(s) for s in args.sizes.split(",")])
    for side in args.merge_sizes.split(","):
        merge_throughput(imagetable, args.merge, int(side))


if __name__ == "__main__":
    main()

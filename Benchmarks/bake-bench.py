#!/usr/bin/env python3
"""The bake benchmark of `make bench`: imagetable bake against vipsthumbnail and ImageMagick,
all run by this one script on the same machine, so the figures are ratios, not absolutes.

    python3 Benchmarks/bake-bench.py [--bin .build/release] [--sources 216]

Sources: crops and re-encodes of ../shared/corpus/photos (made once, kept in bench-out/bake-src).
Formats: FastImageCache's demo family, four 150x150 formats (one per pixel style), cover.
Contenders, each over every source:
  (a)  imagetable bake                                   one decode per source for all 4 formats
  (b)  vipsthumbnail, one process per source per format  the naive script: 4 decodes + 4 starts
  (b') vipsthumbnail, one process per format             4 decodes per source, start-up amortised
  (c)  vipsthumbnail, one process, largest size only     the one-decode floor
  (d)  ImageMagick mogrify -thumbnail, one process per format (when ImageMagick is installed)
Peak memory is the largest sum of proportional resident memory (PSS: shared pages divided among
the processes sharing them) over the process and all its children, sampled every 10 ms; "heap"
is the anonymous part, the rest being mapped files (for the bake, the tables' own pages).
"""
import argparse, os, shutil, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "photos")
OUT = os.path.join(ROOT, "bench-out", "bake")
SRC_CACHE = os.path.join(ROOT, "bench-out", "bake-src")
STYLES = ["32BitBGRA", "32BitBGR", "16BitBGR", "8BitGrayscale"]


def make_sources(count):
    """Crops and re-encodes of the corpus photos: varied sizes, positions and qualities."""
    os.makedirs(SRC_CACHE, exist_ok=True)
    photos = sorted(f for f in os.listdir(CORPUS) if f.endswith(".jpg"))
    made = sorted(os.listdir(SRC_CACHE))
    if len(made) >= count:
        return [os.path.join(SRC_CACHE, f) for f in made[:count]]
    print(f"making {count} sources in {SRC_CACHE} (once)...", flush=True)
    sizes = {}
    for name in photos:
        dims = subprocess.run(["vipsheader", "-f", "width", os.path.join(CORPUS, name)], capture_output=True, text=True)
        height = subprocess.run(["vipsheader", "-f", "height", os.path.join(CORPUS, name)], capture_output=True, text=True)
        sizes[name] = (int(dims.stdout), int(height.stdout))
    for i in range(count):
        name = photos[i % len(photos)]
        photo = os.path.join(CORPUS, name)
        full_w, full_h = sizes[name]
        variant = i // len(photos)
        w, h = full_w * (20 - variant % 7) // 20, full_h * (20 - variant % 5) // 20
        left, top = (full_w - w) * (variant % 3) // 2, (full_h - h) * (variant % 2)
        out = os.path.join(SRC_CACHE, f"s{i:04d}.jpg")
        subprocess.run(["vips", "extract_area", photo, f"{out}[Q={70 + 5 * (variant % 6)}]",
                        str(left), str(top), str(w), str(h)], check=True)
    return [os.path.join(SRC_CACHE, f"s{i:04d}.jpg") for i in range(count)]


def tree_memory(pid):
    """(all, anonymous) proportional kB of `pid` and every descendant: PSS divides shared pages
    among their sharers, so the table pages every process maps are counted once, not per process."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    total = anon = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        stack.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                    elif line.startswith("Pss_Anon:"):
                        anon += int(line.split()[1])
        except OSError:
            pass
    return total, anon


def run(commands):
    """Runs commands one after another; returns (seconds, peak MB, peak anonymous MB) across the
    process tree."""
    peak = peak_anon = 0
    start = time.monotonic()
    for command in commands:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        done = threading.Event()

        def sample():
            nonlocal peak, peak_anon
            while not done.wait(0.01):
                total, anon = tree_memory(process.pid)
                peak, peak_anon = max(peak, total), max(peak_anon, anon)
        sampler = threading.Thread(target=sample)
        sampler.start()
        _, err = process.communicate()
        done.set()
        sampler.join()
        if process.returncode != 0:
            sys.exit(f"failed ({process.returncode}): {' '.join(command[:4])}...\n{err.decode()[-2000:]}")
    return time.monotonic() - start, peak / 1024, peak_anon / 1024


def manifest(src_dir, table_dir):
    path = os.path.join(OUT, "bench.yaml")
    formats = "".join(f"      s{i}:\n        size: 150x150\n        style: {style}\n        maximumCount: 1000\n"
                      for i, style in enumerate(STYLES))
    with open(path, "w") as f:
        f.write(f"version: 1\noutput: {table_dir}\nfamilies:\n  photos:\n    sources: {src_dir}\n    formats:\n{formats}")
    return path


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--sources", type=int, default=216)
    args = parser.parse_args()
    imagetable = os.path.join(args.bin, "imagetable")
    sources = make_sources(args.sources)
    fresh(OUT)
    src = fresh(os.path.join(OUT, "src"))
    for s in sources:
        os.symlink(s, os.path.join(src, os.path.basename(s)))
    jobs = os.cpu_count()
    print(f"Bake: {len(sources)} JPEG sources (crops of the corpus photos), 4 formats of 150x150, {jobs} cores")

    results = []
    bake = [imagetable, "bake", manifest("src", "tables"), "--allow-outside-paths", "--no-progress"]
    results.append(("(a) imagetable bake", *run([bake])))
    results.append(("    imagetable bake again, nothing changed", *run([bake])))

    thumbs = fresh(os.path.join(OUT, "vt"))
    naive = [["vipsthumbnail", s, "-s", "150x150", "--smartcrop", "centre", "-o", f"{thumbs}/%s_{i}.v"]
             for s in sources for i in range(4)]
    results.append(("(b) vipsthumbnail per source per format", *run(naive)))
    per_format = [["vipsthumbnail", *sources, "-s", "150x150", "--smartcrop", "centre", "-o", f"{thumbs}/%s_{i}.v"]
                  for i in range(4)]
    results.append(("(b') vipsthumbnail, one process per format", *run(per_format)))
    floor = [["vipsthumbnail", *sources, "-s", "150x150", "--smartcrop", "centre", "-o", f"{thumbs}/%s.v"]]
    results.append(("(c) vipsthumbnail once per source (floor)", *run(floor)))
    if shutil.which("mogrify"):
        magick = [fresh(os.path.join(OUT, f"im{i}")) for i in range(4)]
        im = [["mogrify", "-path", magick[i], "-thumbnail", "150x150^", "-gravity", "center", "-extent", "150x150",
               "-format", "ppm", *sources] for i in range(4)]
        results.append(("(d) ImageMagick mogrify, one process per format", *run(im)))
    else:
        results.append(("(d) ImageMagick: not installed, skipped", None, None, None))

    a = results[0][1]
    print(f"  {'contender':50} {'seconds':>8} {'ms/source':>10} {'peak MB':>8} {'of it heap':>10} {'vs (a)':>7}")
    for name, seconds, peak, anon in results:
        if seconds is None:
            print(f"  {name}")
            continue
        print(f"  {name:50} {seconds:8.2f} {seconds / len(sources) * 1000:10.1f} {peak:8.0f} {anon:10.0f} {seconds / a:6.2f}x")

    # Memory must not grow with the number of sources: bake a quarter of them, compare peaks.
    quarter = fresh(os.path.join(OUT, "src-quarter"))
    for s in sources[: len(sources) // 4]:
        os.symlink(s, os.path.join(quarter, os.path.basename(s)))
    _, small_peak, small_anon = run([[imagetable, "bake", manifest("src-quarter", "tables-quarter"), "--allow-outside-paths", "--no-progress"]])
    print(f"  (a) with {len(sources) // 4} vs {len(sources)} sources: peak {small_peak:.0f} vs {results[0][2]:.0f} MB,"
          f" of it heap {small_anon:.0f} vs {results[0][3]:.0f} MB (the rest is the tables' own pages, mapped)")


if __name__ == "__main__":
    main()

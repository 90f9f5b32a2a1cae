#!/usr/bin/env python3
"""How `imagetable bake` scales with its workers, next to the decode floor on as many processes.

    python3 Benchmarks/scaling-bench.py [--bin .build/release] [--jobs 1,2] [--photos 500] [--small 2000]
                                        [--sets photos,small] [--no-sync] [--json FILE]

The two source sets of floor-bench.py (1000x800 photos, 330x225 small JPEGs, made with Pillow from
the corpus photos) go through FastImageCache's four 150x150 formats with `-j N` for each N in
--jobs, and through the TurboJPEG decode floor (tjfloor) split over N processes. Runs are
interleaved; each figure is the median over --runs. It prints, per set and N: wall and CPU of
both, the speed-up over N = 1 of both, and bake / floor for CPU and wall; then the bake's phases
(its JSON summary's `phases`: what runs before rendering, rendering, the state's commit) and its
own process's CPU, and with --no-sync the same bake without flushes. --json writes them all.

It needs no Swift or libvips of its own: on a machine without them (a many-core one, see
../shared/notes/device-bench.md), pass the bundle's binaries with --bin, a prebuilt tjfloor with
--tjfloor, the photos to crop with --corpus, and put `vipsthumbnail` on PATH for the reference
row (vipsthumbnail on the largest N).
"""
import argparse, json, os, shutil, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import floor_bench as fb  # noqa: E402


def timed_bake(imagetable, manifest, work, jobs, extra):
    """One bake into an empty output; returns (cpu, wall, the phases it reported)."""
    shutil.rmtree(os.path.join(work, "tables"), ignore_errors=True)
    cpu, wall, (stdout,) = fb.timed([[imagetable, "bake", manifest, "--no-progress", "--allow-outside-paths", "-j", str(jobs),
                                      "--format", "json", *extra]], capture=True)
    summary = json.loads(stdout)
    phases = dict(summary["phases"], own_cpu=summary.get("cpu", {}).get("bake", float("nan")))
    return cpu, wall, phases


def measure(name, files, args, tjfloor):
    work = os.path.join(args.work, f"scaling-{name}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    manifest = fb.write_manifest(work, files)
    imagetable = os.path.join(os.path.abspath(args.bin), "imagetable")
    runs = {}  # (contender, jobs) -> [(cpu, wall)]
    phases = {}  # (bake contender, jobs) -> [the bake's phases]
    for run in range(args.runs):
        for jobs in args.jobs:
            for contender, extra in [("bake", [])] + ([("no-sync", ["--no-sync"])] if args.no_sync else []):
                cpu, wall, ph = timed_bake(imagetable, manifest, work, jobs, extra)
                runs.setdefault((contender, jobs), []).append((cpu, wall))
                phases.setdefault((contender, jobs), []).append(ph)
            runs.setdefault(("floor", jobs), []).append(fb.timed([[tjfloor, fb.BOX, *part] for part in fb.split(files, jobs)]))
        if shutil.which("vipsthumbnail"):
            out = os.path.join(work, "vipsthumb")
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            top = max(args.jobs)
            runs.setdefault(("vipsthumb", top), []).append(fb.timed(
                [["vipsthumbnail", *part, "-s", fb.BOX, "--smartcrop", "centre", "-o", f"{out}/%s.v"]
                 for part in fb.split(files, top)]))
        print(f"  {name}: run {run + 1} of {args.runs} done", flush=True)
    med = {key: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for key, v in runs.items()}
    base_bake, base_floor = med[("bake", args.jobs[0])][1], med[("floor", args.jobs[0])][1]
    rows = []
    print(f"\n{name}: {len(files)} sources, {fb.BOX} x 4 styles, {args.runs} runs, medians; "
          f"speed-up is wall at -j {args.jobs[0]} / wall at -j N")
    print(f"  {'N':>3} {'bake wall s':>11} {'bake CPU s':>10} {'speed-up':>8} {'floor wall s':>12} {'floor CPU s':>11}"
          f" {'speed-up':>8} {'bake/floor CPU':>14} {'bake/floor wall':>15}")
    for jobs in args.jobs:
        (bc, bw), (fc, fw) = med[("bake", jobs)], med[("floor", jobs)]
        row = {"set": name, "sources": len(files), "jobs": jobs, "bake_wall": bw, "bake_cpu": bc, "floor_wall": fw,
               "floor_cpu": fc, "bake_speedup": base_bake / bw, "floor_speedup": base_floor / fw}
        rows.append(row)
        print(f"  {jobs:3d} {bw:11.2f} {bc:10.2f} {base_bake / bw:8.2f} {fw:12.2f} {fc:11.2f} {base_floor / fw:8.2f}"
              f" {bc / fc:14.2f} {bw / fw:15.2f}")
    def phase(contender, jobs, *names):
        return statistics.median(sum(p[n] for n in names) for p in phases[(contender, jobs)])

    print(f"  bake phases (wall s, medians): {'N':>3} {'before render':>13} {'render':>7} {'commit':>7} {'own CPU':>7}"
          + (f" {'--no-sync wall':>14} {'render':>7}" if args.no_sync else ""))
    for jobs in args.jobs:
        before = phase("bake", jobs, "open", "scan", "diff", "plan")
        line = f"  {'':31}{jobs:3d} {before:13.2f} {phase('bake', jobs, 'render'):7.2f} {phase('bake', jobs, 'commit'):7.2f} {phase('bake', jobs, 'own_cpu'):7.2f}"
        rows[args.jobs.index(jobs)].update(before_render=before, render=phase("bake", jobs, "render"), commit=phase("bake", jobs, "commit"),
                                           own_cpu=phase("bake", jobs, "own_cpu"))
        if args.no_sync:
            line += f" {med[('no-sync', jobs)][1]:14.2f} {phase('no-sync', jobs, 'render'):7.2f}"
            rows[args.jobs.index(jobs)].update(no_sync_wall=med[("no-sync", jobs)][1], no_sync_cpu=med[("no-sync", jobs)][0],
                                               no_sync_render=phase("no-sync", jobs, "render"))
        print(line)
    for (contender, jobs), (c, w) in med.items():
        if contender == "vipsthumb":
            bw = med[("bake", jobs)][1]
            print(f"  vipsthumbnail on {jobs} processes: wall {w:.2f} s, CPU {c:.2f} s ({w / bw:.2f}x the bake's wall)")
            rows.append({"set": name, "sources": len(files), "jobs": jobs, "vipsthumb_wall": w, "vipsthumb_cpu": c})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(fb.ROOT, ".build", "release"))
    parser.add_argument("--tjfloor", help="a built tjfloor (default: build Benchmarks/floor/tjfloor.c here)")
    parser.add_argument("--corpus", default=fb.CORPUS, help="the photos the sources are cropped from")
    parser.add_argument("--work", default=os.path.join(fb.ROOT, "bench-out"))
    parser.add_argument("--jobs", default=f"1,{os.cpu_count()}", type=lambda s: [int(j) for j in s.split(",")])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--photos", type=int, default=500)
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--json", help="write every median here as JSON")
    parser.add_argument("--no-sync", action="store_true", help="also bake with --no-sync (no flushes), for disks that limit the bake")
    parser.add_argument("--sets", default="photos,small", help="which source sets, of photos and small")
    args = parser.parse_args()
    tjfloor = args.tjfloor
    if not tjfloor:
        tjfloor = os.path.join(args.work, "tjfloor")
        os.makedirs(args.work, exist_ok=True)
        subprocess.run(["cc", "-O2", "-o", tjfloor, os.path.join(fb.HERE, "tjfloor.c"), "-lturbojpeg"], check=True)
    print(f"{os.cpu_count()} cores; -j {', '.join(map(str, args.jobs))}", flush=True)
    rows = []
    for name, count, size in [("photos", args.photos, (1000, 800)), ("small", args.small, (330, 225))]:
        if count and name in args.sets.split(","):
            rows += measure(name, fb.make_set(name, count, size, fb.pillow_python() or sys.exit("scaling-bench needs Pillow"), args.corpus, args.work), args, tjfloor)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"cores": os.cpu_count(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The decode-floor benchmark of `make bench`: what `imagetable bake` costs per source next to
decoding alone, and next to the tools a user would reach for, all in this one script.

    python3 Benchmarks/floor-bench.py [--bin .build/release] [--runs 3] [--photos 500] [--small 2000]

Two source sets, made once from ../shared/corpus/photos with Pillow (bench-out/floor-src-*):
  photos  1000x800 JPEGs (crops of the corpus photos, quality 75-92)
  small   330x225 JPEGs (a 400 px-or-less set, where per-source overheads show)
Formats: FastImageCache's four 150x150 formats (one per pixel style), cover. Contenders, each on
as many processes as the machine has cores (the bake's default -j), files split evenly:
  floor       TurboJPEG decodes each JPEG at the DCT scale the bake uses, and discards it
              (and in one process, for the scaling the machine allows decoding alone)
  vips-load   libvips jpegload at the same scale, copied to memory, discarded
  bake        imagetable bake into an empty output directory (and with -j 1, for scaling)
  output      the output floor: each source's four slots written into files made as the bake's
              tables are (one pwrite a slot, a flush every 32), nothing decoded, no checksum
  pillow      Pillow draft() + ImageOps.fit (Lanczos) into the four formats' modes, in memory;
              draft() decodes at the smallest DCT scale covering 150x150 (1/4 for the photos)
  pillow 2x   the same with draft() covering 300x300: the DCT scale the bake decodes at
  magick      ImageMagick mogrify -define jpeg:size -thumbnail, one 150x150 output per source
  vipsthumb   vipsthumbnail, one 150x150 output per source
CPU is user + system time of every process of a contender (getrusage of the children); wall is
elapsed time. Runs are interleaved (each contender once per run), and each figure is reported
as min / median / max over the runs. Ratios are taken between medians of the same run set.
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "Benchmarks", "floor")
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "photos")
OUT = os.path.join(ROOT, "bench-out", "floor")
STYLES = ["32BitBGRA", "32BitBGR", "16BitBGR", "8BitGrayscale"]
BOX = "150x150"


def pillow_python():
    """A Python that has Pillow: this one, or the system's (Debian's python3-pil)."""
    for candidate in [sys.executable, "/usr/bin/python3"]:
        if subprocess.run([candidate, "-c", "import PIL"], capture_output=True).returncode == 0:
            return candidate
    return None


def make_set(name, count, size, python, corpus=CORPUS, root=os.path.join(ROOT, "bench-out")):
    """`count` JPEGs of `size` (w, h) in `root`/floor-src-`name`, cropped from the photos in
    `corpus` at varied places and qualities; made once, by as many processes as there are cores.
    Source i depends on i alone, so a set made on another machine holds the same images."""
    directory = os.path.join(root, f"floor-src-{name}")
    have = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    if len(have) >= count:
        return [os.path.join(directory, f) for f in have[:count]]
    os.makedirs(directory, exist_ok=True)
    print(f"making {count} {size[0]}x{size[1]} sources in {directory} (once)...", flush=True)
    parts = os.cpu_count() or 1
    makers = [subprocess.Popen([python, "-c", """
import os, sys
from PIL import Image
corpus, directory, count, w, h, first, step = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
photos = [Image.open(os.path.join(corpus, f)).convert("RGB") for f in sorted(os.listdir(corpus)) if f.endswith(".jpg")]
for i in range(first, count, step):
    photo = photos[i % len(photos)]
    variant = i // len(photos)
    scale = 1 - 0.04 * (variant % 9)
    cw, ch = int(min(photo.width, photo.height * w / h) * scale), int(min(photo.height, photo.width * h / w) * scale)
    left, top = (photo.width - cw) * (variant % 5) // 4, (photo.height - ch) * (variant % 3) // 2
    crop = photo.crop((left, top, left + cw, top + ch)).resize((w, h), Image.LANCZOS)
    crop.save(os.path.join(directory, f"s{i:05d}.jpg"), quality=75 + (i * 7) % 18)
""", corpus, directory, str(count), str(size[0]), str(size[1]), str(part), str(parts)]) for part in range(parts)]
    if [m.wait() for m in makers].count(0) != parts:
        sys.exit(f"could not make the {name} sources")
    return make_set(name, count, size, python, corpus, root)


def split(files, parts):
    return [files[i::parts] for i in range(parts)]


def timed(commands_in_parallel, capture=False):
    """Runs the commands at once; returns (cpu seconds of them all, wall seconds), and with
    `capture` also each command's standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    processes = [subprocess.Popen(c, stdout=out, stderr=subprocess.PIPE) for c in commands_in_parallel]
    outputs = []
    for p, c in zip(processes, commands_in_parallel):
        stdout, err = p.communicate()
        if p.returncode != 0:
            said = (stdout or b"").decode()[-1500:] + err.decode()[-1500:]
            sys.exit(f"failed ({p.returncode}): {' '.join(c[:3])}...\n{said}")
        outputs.append(stdout)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (cpu, wall, outputs) if capture else (cpu, wall)


def write_manifest(work, files):
    """`work`/bench.yaml: one family over `work`/src (hard links to `files`, made once) with the
    four 150x150 formats, one per style, each with a slot for every file."""
    manifest = os.path.join(work, "bench.yaml")
    src = os.path.join(work, "src")
    if not os.path.isdir(src):
        os.makedirs(src)
        for f in files:
            os.link(f, os.path.join(src, os.path.basename(f)))
    formats = "".join(f"      s{i}:\n        size: {BOX}\n        style: {style}\n        maximumCount: {len(files)}\n"
                      for i, style in enumerate(STYLES))
    with open(manifest, "w") as f:
        f.write(f"version: 1\noutput: tables\nfamilies:\n  photos:\n    sources: src\n    formats:\n{formats}")
    return manifest


def contenders(args, files, jobs, tools, python, work):
    """name -> a function that prepares and returns the commands of one run."""
    manifest = write_manifest(work, files)
    imagetable = os.path.join(os.path.abspath(args.bin), "imagetable")

    def bake(j):
        def prepare():
            shutil.rmtree(os.path.join(work, "tables"), ignore_errors=True)
            return [[imagetable, "bake", manifest, "--no-progress", "--allow-outside-paths", "-j", str(j)]]
        return prepare

    sizes = []

    def output(j):
        """The output floor: the bake's slots written and flushed, nothing else. The slot sizes
        are read from the tables the bake just made (it runs first in each run)."""
        def prepare():
            if not sizes:
                tables = os.path.join(work, "tables")
                for name in sorted(f for f in os.listdir(tables) if f.endswith(".imagetable")):
                    header = json.loads(subprocess.run([imagetable, "inspect", os.path.join(tables, name), "--no-entries",
                                                        "--format", "json"], capture_output=True, text=True, check=True).stdout)
                    header = header["tables"][0]["header"]
                    sizes.append(f"{header['imageBytes']}:{header['slotStride']}")
            out = fresh_dir("output")
            return [[tools["outfloor"], out, str(len(files)), str(p), str(j), *sizes] for p in range(j)]
        return prepare

    def fresh_dir(name):
        path = os.path.join(work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    side = int(BOX.split("x")[0])
    found = {
        "floor": lambda: [[tools["tjfloor"], BOX, *part] for part in split(files, jobs)],
        # The floor in one process: how far this machine lets decoding alone scale.
        "floor -j 1": lambda: [[tools["tjfloor"], BOX, *files]],
        "vips-load": lambda: [[tools["vipsfloor"], BOX, *part] for part in split(files, jobs)],
        "bake": bake(jobs),
        "bake -j 1": bake(1),
        "output": output(jobs),
    }
    if python:
        found["pillow"] = lambda: [[python, os.path.join(HERE, "pillow_thumbs.py"), BOX, *part] for part in split(files, jobs)]
        # draft() picks the smallest DCT scale that covers the box it is given; given twice the
        # box, it decodes at the scale the bake uses (libvips' rule leaves 2x for the resampler).
        found["pillow 2x"] = lambda: [[python, os.path.join(HERE, "pillow_thumbs.py"), BOX, "--draft-box", f"{2 * side}x{2 * side}", *part]
                                      for part in split(files, jobs)]
    if shutil.which("mogrify"):
        found["magick"] = lambda: (lambda out: [["mogrify", "-path", out, "-define", f"jpeg:size={2 * side}x{2 * side}",
                                                  "-thumbnail", f"{BOX}^", "-gravity", "center", "-extent", BOX,
                                                  "-format", "ppm", *part] for part in split(files, jobs)])(fresh_dir("magick"))
    found["vipsthumb"] = lambda: (lambda out: [["vipsthumbnail", *part, "-s", BOX, "--smartcrop", "centre", "-o", f"{out}/%s.v"]
                                               for part in split(files, jobs)])(fresh_dir("vipsthumb"))
    return found


def build_tools():
    """Compiles the three C contenders; TurboJPEG comes from Debian's libturbojpeg0-dev."""
    os.makedirs(OUT, exist_ok=True)
    tools = {name: os.path.join(OUT, name) for name in ["tjfloor", "vipsfloor", "outfloor"]}
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "vips"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-o", tools["tjfloor"], os.path.join(HERE, "tjfloor.c"), "-lturbojpeg"], check=True)
    subprocess.run(["cc", "-O2", "-o", tools["vipsfloor"], os.path.join(HERE, "vipsfloor.c"), *flags], check=True)
    subprocess.run(["cc", "-O2", "-o", tools["outfloor"], os.path.join(HERE, "outfloor.c")], check=True)
    return tools


def spread(values):
    return f"{min(values):6.2f} {statistics.median(values):6.2f} {max(values):6.2f}"


def measure(name, files, args, jobs, tools, python):
    work = os.path.join(OUT, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    found = contenders(args, files, jobs, tools, python, work)
    cpu = {k: [] for k in found}
    wall = {k: [] for k in found}
    for _ in range(args.runs):
        for key, prepare in found.items():
            c, w = timed(prepare())
            cpu[key].append(c)
            wall[key].append(w)
    med = {k: (statistics.median(cpu[k]), statistics.median(wall[k])) for k in found}
    floor_cpu, bake_cpu, bake_wall = med["floor"][0], med["bake"][0], med["bake"][1]
    print(f"\n{name}: {len(files)} sources, {BOX} x 4 styles, {jobs} processes, {args.runs} runs (min median max)")
    print(f"  {'contender':12} {'CPU s':>20} {'wall s':>20} {'CPU ms/source':>14} {'CPU / floor':>12} {'wall / bake':>12}")
    for key in found:
        print(f"  {key:12} {spread(cpu[key]):>20} {spread(wall[key]):>20} {1000 * med[key][0] / len(files):14.2f}"
              f" {med[key][0] / floor_cpu:12.2f} {med[key][1] / bake_wall:12.2f}")
    print(f"  bake / floor: CPU {bake_cpu / floor_cpu:.2f}, wall {bake_wall / med['floor'][1]:.2f};"
          f" -j {jobs} vs -j 1: {med['bake -j 1'][1] / bake_wall:.2f}x faster"
          f" (the floor on {jobs} processes vs 1: {med['floor -j 1'][1] / med['floor'][1]:.2f}x)")
    out_cpu = med["output"][0]
    print(f"  output floor / floor: CPU {out_cpu / floor_cpu:.2f};"
          f" bake / (floor + output floor): CPU {bake_cpu / (floor_cpu + out_cpu):.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--photos", type=int, default=500)
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--only", choices=["photos", "small"])
    args = parser.parse_args()
    python = pillow_python()
    if not python:
        sys.exit("floor-bench needs Pillow to make its sources: apt-get install python3-pil")
    tools = build_tools()
    jobs = os.cpu_count()
    if args.only != "small":
        measure("photos", make_set("photos", args.photos, (1000, 800), python), args, jobs, tools, python)
    if args.only != "photos":
        measure("small", make_set("small", args.small, (330, 225), python), args, jobs, tools, python)


if __name__ == "__main__":
    main()

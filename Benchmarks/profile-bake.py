#!/usr/bin/env python3
"""Where a bake's CPU goes: `perf record` of `imagetable bake -j 1` on floor-bench's source sets,
every sample put in one of a dozen groups (libjpeg's decode, resampling, the worker's writes of
the slots, the bake's flushes, the protocol...), printed as shares of the whole.

    python3 Benchmarks/profile-bake.py [--bin .build/release] [--sets photos,small] [--photos 500] [--small 2000]

It needs `perf` (linux-tools) and floor-bench's source sets (it makes them as floor-bench does,
with Pillow, when they are missing). One worker, so its samples and the bake process's are told
apart by process; the groups go by the sampled function and the stack above it. This is the
table of docs/PIPELINE.md ("Measured: the decode floor"); the shares move by a point or two
between two profiles of the same build, the kernel's most (each profile starts with a `sync`).
"""
import argparse, collections, os, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import floor_bench as fb  # noqa: E402

PROTOCOL = r"WireJSON|WireWriter|WireCodec|WireFields|LineReader|LineChannel|s14WorkerProtocol0A10Connection"
FLUSHES = r"flushSlots|flushRecords|flushAll|fdatasync|msync"
# Groups in the order they are tried; the first whose test holds takes the sample.
GROUPS = [
    ("libjpeg decode (the floor's own work)", lambda s: "libjpeg" in s.leaf_dso or s.leaf.startswith("cjpeg_")),
    ("resampling (CPixels)", lambda s: re.search(r"horizontal_|vertical_|cresample|stripes_avx2|stripes_avx512|filter_stripe|turn_samples|turn_bytes", s.leaf)),
    ("packing into the four styles", lambda s: not s.kernel and re.search(r"pack_|cpixels_pack|PixelWriter", s.stack)),
    ("CRC-32 of the slots", lambda s: re.search(r"crc32|CRC32|fold_wide|fold512", s.leaf)),
    ("SHA-1 fingerprint", lambda s: re.search(r"sha1|SHA1", s.leaf)),
    ("start-up (the dynamic loader)", lambda s: "ld-linux" in s.leaf_dso),
    ("worker kernel: pwrite of the slots", lambda s: s.worker and s.kernel and re.search(r"pwrite|DelegatedSlots", s.stack)),
    ("worker kernel: reading the source, pipes, faults", lambda s: s.worker and s.kernel),
    ("worker: protocol", lambda s: s.worker and re.search(PROTOCOL, s.stack)),
    ("worker: allocation, Swift runtime, job handling", lambda s: s.worker),
    ("bake kernel: flushing slots and records", lambda s: s.kernel and re.search(FLUSHES, s.stack)),
    ("bake kernel: pipes, reads, faults", lambda s: s.kernel),
    ("bake: protocol", lambda s: re.search(PROTOCOL, s.stack)),
    ("bake: plan, reservations, publishing, state", lambda s: True),
]


class Sample:
    def __init__(self, pid, frames):
        self.pid = pid
        self.frames = frames  # [(symbol, dso)], leaf first
        self.leaf, self.leaf_dso = frames[0] if frames else ("", "")
        self.kernel = "kernel" in self.leaf_dso
        self.stack = " ".join(f for f, _ in frames)
        self.worker = False


def samples(script):
    """The samples of `perf script -F pid,tid,comm,ip,sym,dso` output."""
    out, current = [], None
    for line in script.splitlines():
        if line and not line[0].isspace():
            match = re.match(r"\s*\S+\s+(\d+)/\d+", line)
            current = [match.group(1) if match else "?", []]
            out.append(current)
        elif current is not None and line.strip():
            parts = line.strip().split(None, 1)
            frame = re.match(r"(.*) \((.*)\)$", parts[1] if len(parts) > 1 else "")
            current[1].append((re.sub(r"\+0x[0-9a-f]+$", "", frame.group(1)), frame.group(2)) if frame else ("", ""))
    return [Sample(pid, frames) for pid, frames in out if frames]


def profile(name, files, args, work):
    manifest = fb.write_manifest(work, files)
    shutil.rmtree(os.path.join(work, "tables"), ignore_errors=True)
    data = os.path.join(work, "perf.data")
    # Written data still waiting for the disk (an earlier bake's) is written back and reclaimed
    # inside this bake's writes, and would triple their share.
    subprocess.run(["sync"], check=True)
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-g", "-o", data, "--",
                    os.path.join(os.path.abspath(args.bin), "imagetable"), "bake", manifest, "--no-progress",
                    "--allow-outside-paths", "-j", "1"], check=True, stdout=subprocess.DEVNULL)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,tid,comm,ip,sym,dso"], check=True,
                            capture_output=True, text=True).stdout
    all_samples = samples(script)
    workers = {s.pid for s in all_samples if "imagetable_worker_main" in s.stack}
    for s in all_samples:
        s.worker = s.pid in workers
    counts = collections.Counter(next(label for label, test in GROUPS if test(s)) for s in all_samples)
    print(f"\n{name}: {len(files)} sources, {len(all_samples)} samples, "
          f"{100 * sum(s.worker for s in all_samples) / len(all_samples):.0f} % of them in the worker")
    for label, _ in GROUPS:
        print(f"  {100 * counts[label] / len(all_samples):5.1f} %  {label}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(fb.ROOT, ".build", "release"))
    parser.add_argument("--sets", default="photos,small")
    parser.add_argument("--photos", type=int, default=500)
    parser.add_argument("--small", type=int, default=2000)
    args = parser.parse_args()
    if not shutil.which("perf"):
        sys.exit("profile-bake needs perf (Debian: apt-get install linux-perf)")
    python = fb.pillow_python()
    if not python:
        sys.exit("profile-bake needs Pillow to make floor-bench's sources: apt-get install python3-pil")
    sizes = {"photos": (args.photos, (1000, 800)), "small": (args.small, (330, 225))}
    with tempfile.TemporaryDirectory(prefix="profile-bake-") as work:
        for name in args.sets.split(","):
            count, size = sizes[name]
            os.makedirs(os.path.join(work, name))
            profile(name, fb.make_set(name, count, size, python), args, os.path.join(work, name))


if __name__ == "__main__":
    main()

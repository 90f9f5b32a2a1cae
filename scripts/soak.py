#!/usr/bin/env python3
"""`make soak`: bakes that run, overlap and are killed while a mutator rewrites their sources.

    python3 scripts/soak.py [--bin .build/release] [--rounds 6] [--seconds 10] [--seed N]

Each round, for `--seconds`:
  - a mutator changes the sources of one family without pause: slow writes (truncate, then
    a few KiB at a time), atomic replaces (write aside, rename over), in-place overwrites (no
    truncation until the end, so a reader can see half of each version), deletions, renames, and
    rollbacks to the previous version with its old modification time put back (as `cp -p` does);
  - a generator flips two hot files between two versions every few milliseconds (A, B, A...);
  - two loops run `imagetable bake` back to back (so runs overlap and wait for the locks), some
    with `--prune`, and kill about a third of them at a random instant (SIGKILL or SIGTERM).
Then, with the mutator stopped:
  - no `imagetable-worker` of this binary may be left running;
  - a quiet bake (`--prune`) must exit 0, and a second one must decode nothing;
  - a clean bake of a copy of the sources as they now are, into an empty directory, must give the
    same entries: the same keys, and per key the same source UUID, content rectangle and pixels,
    byte for byte (read with the reader in docs/FORMAT.md, not with our own code);
  - every present source has its entry, and `imagetable verify` passes.
Any failure stops the soak with exit 1. The last line is one line of counts (quoted in the README).
"""
import argparse, os, random, shutil, signal, subprocess, sys, threading, time, json

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "photos")
OUT = os.path.join(ROOT, "bench-out", "soak")
NAMES = [f"a{i:02d}.jpg" for i in range(12)] + [f"sub/b{i}.jpg" for i in range(4)] + ["p0.png", "p1.png", "sub/p2.png"]
CAPACITY = 32  # more slots than names (and the two hot files), so every present source must have its entry


def spec_reader():
    """`read_table` from docs/FORMAT.md: the spec's reader checks our tables, not our code."""
    spec = open(os.path.join(ROOT, "docs", "FORMAT.md")).read()
    start = spec.index("<!-- python-reader:begin -->\n```python\n") + len("<!-- python-reader:begin -->\n```python\n")
    source = spec[start:spec.index("```\n<!-- python-reader:end -->")]
    scope = {"__name__": "spec_reader"}
    exec(compile(source, "docs/FORMAT.md", "exec"), scope)
    return scope["read_table"]


def make_versions():
    """Three versions of every JPEG name and two of every PNG name, small enough that a bake of
    them takes about a second and races come often."""
    cache = os.path.join(ROOT, "bench-out", "soak-versions")
    photos = sorted(f for f in os.listdir(CORPUS) if f.endswith(".jpg"))
    wanted = {"jpg": 24, "png": 6}
    os.makedirs(cache, exist_ok=True)
    versions = {}
    for ext, count in wanted.items():
        paths = []
        for i in range(count):
            out = os.path.join(cache, f"v{i:02d}.{ext}")
            if not os.path.exists(out):
                photo = os.path.join(CORPUS, photos[i % len(photos)])
                crop = 600 - 40 * (i // len(photos))
                target = f"{out}[Q={60 + 5 * (i % 7)}]" if ext == "jpg" else out
                subprocess.run(["vips", "thumbnail", photo, target, str(crop), "--height", str(crop * 2 // 3),
                                "--crop", ["centre", "attention", "low", "high"][i % 4]], check=True)
            paths.append(open(out, "rb").read())
        versions[ext] = paths
    return versions


class Mutator:
    """Changes the sources until told to stop; counts what it did."""

    def __init__(self, sources, versions, rng):
        self.sources, self.versions, self.rng = sources, versions, rng
        self.history = {}  # name -> [(bytes, mtime)] of the versions it held, newest last
        self.counts = dict.fromkeys(["slow", "atomic", "inplace", "delete", "rename", "rollback", "flip"], 0)

    def path(self, name):
        return os.path.join(self.sources, name)

    def pick_bytes(self, name):
        return self.rng.choice(self.versions["png" if name.endswith(".png") else "jpg"])

    def remember(self, name):
        p = self.path(name)
        self.history.setdefault(name, []).append((open(p, "rb").read(), os.stat(p).st_mtime_ns))
        del self.history[name][:-4]

    def write_slowly(self, name, data, truncate_first):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate_first else 0), 0o644)
        try:
            at = 0
            while at < len(data):
                step = self.rng.choice([4096, 8192, 32768])
                os.pwrite(fd, data[at:at + step], at)
                at += step
                time.sleep(self.rng.uniform(0, 0.004))
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    def step(self):
        name = self.rng.choice(NAMES)
        p = self.path(name)
        present = os.path.exists(p)
        kind = self.rng.choice(["slow", "atomic", "inplace", "delete", "rename", "rollback"] if present else ["slow", "atomic"])
        if kind == "rollback" and len(self.history.get(name, [])) < 2:
            kind = "inplace"
        if kind == "slow":
            self.write_slowly(name, self.pick_bytes(name), truncate_first=True)
        elif kind == "inplace":
            self.write_slowly(name, self.pick_bytes(name), truncate_first=False)
        elif kind == "atomic":
            os.makedirs(os.path.dirname(p), exist_ok=True)
            aside = os.path.join(os.path.dirname(p), f".soak-{os.getpid()}.tmp")
            with open(aside, "wb") as f:
                f.write(self.pick_bytes(name))
            os.replace(aside, p)
        elif kind == "delete":
            os.unlink(p)
        elif kind == "rename":
            free = [n for n in NAMES if n != name and n[-4:] == name[-4:] and not os.path.exists(self.path(n))]
            if not free:
                return self.step()
            target = self.rng.choice(free)
            os.makedirs(os.path.dirname(self.path(target)), exist_ok=True)
            os.rename(p, self.path(target))
            name = target
        elif kind == "rollback":
            data, mtime = self.history[name][-2]
            self.write_slowly(name, data, truncate_first=self.rng.random() < 0.5)
            os.utime(p, ns=(mtime, mtime))
        self.counts[kind] += 1
        if os.path.exists(self.path(name)):
            self.remember(name)

    def run(self, stop):
        while not stop.is_set():
            self.step()
            time.sleep(self.rng.uniform(0.005, 0.05))

    def flip(self, stop):
        """A generator that alternates two hot files between two versions every few milliseconds,
        by rename: a bake that fingerprints one version and decodes the other leaves a wrong
        entry that no later bake sees, once the file settles on the fingerprinted version."""
        hot = [("hot0.jpg", self.versions["jpg"][0], self.versions["jpg"][1]),
               ("hot1.png", self.versions["png"][0], self.versions["png"][1])]
        while not stop.is_set():
            for name, a, b in hot:
                aside = self.path(f".soak-flip-{name}.tmp")
                with open(aside, "wb") as f:
                    f.write(self.rng.choice([a, b]))
                os.replace(aside, self.path(name))
                self.counts["flip"] += 1
            time.sleep(self.rng.uniform(0.001, 0.008))


class BakeLoop:
    """Runs bakes back to back until told to stop, killing some at a random instant."""

    def __init__(self, binary, manifest, rng, tally, problems):
        self.binary, self.manifest, self.rng, self.tally, self.problems = binary, manifest, rng, tally, problems

    def run(self, stop):
        while not stop.is_set():
            args = [self.binary, "bake", self.manifest, "--no-progress", "--lock-timeout", "300"]
            if self.rng.random() < 0.3:
                args.append("--prune")
            bake = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            killer = None
            if self.rng.random() < 0.4:
                how = self.rng.choice([signal.SIGKILL, signal.SIGTERM])
                killer = threading.Timer(self.rng.uniform(0.003, 0.3), lambda: bake.poll() is None and bake.send_signal(how))
                killer.start()
            _, err = bake.communicate()
            if killer:
                killer.cancel()
            code = bake.returncode
            killed = code in (-signal.SIGKILL, -signal.SIGTERM, 128 + signal.SIGTERM)
            self.tally["bakes"] += 1
            self.tally["killed"] += killed
            self.tally["exit3"] += code == 3
            if not killed and code not in (0, 3):
                self.problems.append(f"bake exited {code}: {err.decode(errors='replace')[-600:]}")


def bake_json(binary, manifest, *extra):
    done = subprocess.run([binary, "bake", manifest, "--no-progress", "--format", "json", *extra], capture_output=True)
    try:
        return done.returncode, json.loads(done.stdout), done.stderr.decode(errors="replace")
    except ValueError:
        return done.returncode, None, done.stderr.decode(errors="replace")


def stray_workers(worker):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") == worker:
                found.append(int(pid))
        except OSError:
            pass
    return found


def write_manifest(path):
    """The soak's manifest, beside its `src` and `tables` directories."""
    sources, tables = "src", "tables"
    with open(path, "w") as f:
        f.write(f"""version: 1
output: {tables}
families:
  soak:
    sources: {sources}
    formats:
      thumb:
        size: 96x64
        style: 32BitBGRA
        maximumCount: {CAPACITY}
      tile:
        size: 40x40
        scales: [1, 2]
        style: 16BitBGR
        maximumCount: {CAPACITY}
        fit: cover
""")


def compare(read_table, soaked, clean):
    """(entries compared, problems) between the soaked tables and the clean bake's."""
    compared, problems = 0, []
    names = sorted(f for f in os.listdir(clean) if f.endswith(".imagetable"))
    if names != sorted(f for f in os.listdir(soaked) if f.endswith(".imagetable")):
        return 0, [f"different tables: {names} vs {sorted(os.listdir(soaked))}"]
    for name in names:
        _, want = read_table(os.path.join(clean, name))
        _, got = read_table(os.path.join(soaked, name))
        for key in sorted(set(want) | set(got)):
            if key not in got:
                problems.append(f"{name}: {key}: missing")
            elif key not in want:
                problems.append(f"{name}: {key}: present, but its source is gone")
            else:
                compared += 1
                (_, w_source, w_rect, w_rows), (_, g_source, g_rect, g_rows) = want[key], got[key]
                if (w_source, w_rect) != (g_source, g_rect):
                    problems.append(f"{name}: {key}: source UUID or rectangle differs from a clean bake")
                elif w_rows != g_rows:
                    problems.append(f"{name}: {key}: pixels differ from a clean bake")
    return compared, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    binary = os.path.join(os.path.abspath(args.bin), "imagetable")
    worker = os.path.join(os.path.abspath(args.bin), "imagetable-worker")
    rng = random.Random(args.seed)
    read_table = spec_reader()
    versions = make_versions()
    shutil.rmtree(OUT, ignore_errors=True)
    sources, tables, manifest = os.path.join(OUT, "src"), os.path.join(OUT, "tables"), os.path.join(OUT, "soak.yaml")
    os.makedirs(os.path.join(sources, "sub"))
    write_manifest(manifest)
    mutator = Mutator(sources, versions, random.Random(rng.random()))
    for name in NAMES[::2]:
        mutator.write_slowly(name, mutator.pick_bytes(name), truncate_first=True)
        mutator.remember(name)
    tally = dict(bakes=0, killed=0, exit3=0)
    compared = verified = 0
    problems = []
    started = time.time()
    print(f"soak: seed {args.seed}, {args.rounds} rounds of {args.seconds:g} s, {binary}", flush=True)
    for round_number in range(1, args.rounds + 1):
        stop = threading.Event()
        threads = [threading.Thread(target=mutator.run, args=(stop,)), threading.Thread(target=mutator.flip, args=(stop,))]
        threads += [threading.Thread(target=BakeLoop(binary, manifest, random.Random(rng.random()), tally, problems).run,
                                     args=(stop,)) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join()
        deadline = time.time() + 5
        while stray_workers(worker) and time.time() < deadline:
            time.sleep(0.1)
        if stray_workers(worker):
            problems.append(f"round {round_number}: workers left running: {stray_workers(worker)}")
        code, report, err = bake_json(binary, manifest, "--prune")
        if code != 0:
            problems.append(f"round {round_number}: the quiet bake exited {code}: {err[-600:]}")
        code, report, err = bake_json(binary, manifest)
        if code != 0 or report is None or report["sources"]["decoded"] != 0:
            problems.append(f"round {round_number}: a second quiet bake was not quiet (exit {code}): "
                            f"{report and report['sources']} {err[-300:]}")
        # The clean bake: a copy of the sources as they are now, into an empty directory.
        clean = os.path.join(OUT, f"clean-{round_number}")
        shutil.copytree(sources, os.path.join(clean, "src"), ignore=shutil.ignore_patterns(".soak-*"))
        write_manifest(os.path.join(clean, "soak.yaml"))
        code, report, err = bake_json(binary, os.path.join(clean, "soak.yaml"))
        present = sum(len(files) for _, _, files in os.walk(os.path.join(clean, "src")))
        if code != 0 or report is None or report["sources"]["decoded"] != present:
            problems.append(f"round {round_number}: the clean bake exited {code}, {report and report['sources']}: {err[-300:]}")
        if problems:
            break
        n, found = compare(read_table, tables, os.path.join(clean, "tables"))
        compared += n
        problems += [f"round {round_number}: {p}" for p in found]
        table_files = sorted(os.path.join(tables, f) for f in os.listdir(tables) if f.endswith(".imagetable"))
        check = subprocess.run([binary, "verify", *table_files], capture_output=True)
        verified += check.returncode == 0
        if check.returncode != 0:
            problems.append(f"round {round_number}: verify exited {check.returncode}: {check.stderr.decode()[-600:]}")
        shutil.rmtree(clean)
        print(f"  round {round_number}: {tally['bakes']} bakes so far, {present} sources now, "
              f"{n} entries equal to a clean bake, {len(problems)} problems", flush=True)
        if problems:
            break
    m = mutator.counts
    for p in problems:
        print(f"soak: error: {p}", file=sys.stderr)
    print(f"soak: {round_number} rounds, {time.time() - started:.0f} s, seed {args.seed}: "
          f"{tally['bakes']} bakes ({tally['killed']} killed, {tally['exit3']} exit 3), "
          f"{sum(m.values())} mutations ({m['slow']} slow, {m['atomic']} atomic, {m['inplace']} in place, "
          f"{m['delete']} deleted, {m['rename']} renamed, {m['rollback']} rolled back, {m['flip']} flipped); "
          f"{compared} entries equal to a clean bake, {len(problems)} problems, verify clean {verified}/{round_number}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

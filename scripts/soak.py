#!/usr/bin/env python3
"""`make soak`: bakes that run, overlap and are killed while their sources change under them.

    python3 scripts/soak.py [--bin .build/release] [--kills 1000] [--rounds 6] [--seconds 10] [--seed N]

Rounds of `--seconds` each run until the bakes have been killed with SIGKILL `--kills` times
(1,000 by default: about 30 rounds, 6 to 7 minutes on an idle 2-core machine) and at least
`--rounds` rounds have run. Each round, for `--seconds`:
  - a mutator changes the sources without pause: slow writes (truncate, then a few KiB at a
    time), atomic replaces (write aside, rename over), in-place overwrites (no truncation until
    the end, so a reader can see half of each version), deletions, renames, rollbacks to the
    previous version with its old modification time put back (as `cp -p` does), and touches (a
    new modification time over the same bytes);
  - a generator flips two hot files between two versions every few milliseconds (A, B, A...);
  - two loops run `imagetable bake` of the one manifest back to back (so runs overlap and wait
    for the locks), some with `--prune`; each bake is given a kill at a random instant with
    probability 7 in 10 (`bakes.KILL_RATE`), 4 in 5 of those as SIGKILL (`bakes.SIGKILL_SHARE`)
    and the rest SIGTERM or SIGINT, which stop a bake that is rendering between two sources (it
    must report, then end by the signal); a kill timed after the bake had finished is not counted;
  - after every bake that a signal killed, `imagetable verify` checks every table at once, while
    the other loop may be baking: exit 0 (sound) or 2 (interrupted, the next bake completes it)
    is what a kill may leave; 1 (damage) is a problem;
  - a reader process reads random entries through the checked read; rendering is
    deterministic, so two different pixel checksums for one (table, source) are a torn read.
The sources are crops of the corpus photos (real JPEGs, some re-encoded as PNG). The manifest has a
family with a slot for every source and one with fewer slots than sources (8 for about 20: the
over-full rules and eviction at every bake).
Then, with the mutator stopped:
  - no `imagetable-worker` of this binary may be left running;
  - a quiet bake (`--prune`) must exit 0, and a second one must decode nothing;
  - a clean bake of a copy of the sources as they now are, into an empty directory, must give the
    same entries: the same keys, and per key the same source UUID, content rectangle and pixels,
    byte for byte (read with the reader in docs/FORMAT.md, not with our own code), and the same
    recorded source modification time (the copy keeps the files' times); so every
    present source has its entry, and nothing whose source did not change was lost;
  - `imagetable verify` passes (exit 0: the quiet bake completed every interrupted write);
  - a full disk: a bake into a 600 KB tmpfs must fail cleanly (exit 1, `no-space`); once the
    tmpfs is grown, the next bake must complete and equal the clean bake (skipped where tmpfs
    cannot be mounted: not root, or a container that forbids it).
Any failure stops the soak with exit 1. The last line is one line of counts (quoted in the README).
"""
import argparse, os, random, shutil, subprocess, sys, threading, time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soaklib import bakes, checks, diskfull
from soaklib.mutator import NAMES, Mutator, make_versions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench-out", "soak")


def reader_process(bench, tables, seconds):
    return subprocess.Popen([bench, "soak-reader", tables, str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def round_checks(n, binary, worker, manifest, sources, tables, read_table, problems):
    """The checks after round `n`; returns (entries compared, verify passed, full-disk episode ran)."""
    deadline = time.time() + 5
    while bakes.stray_workers(worker) and time.time() < deadline:
        time.sleep(0.1)
    if bakes.stray_workers(worker):
        problems.append(f"round {n}: workers left running: {bakes.stray_workers(worker)}")
    code, report, err = bakes.bake_json(binary, manifest, "--prune")
    if code != 0:
        problems.append(f"round {n}: the quiet bake exited {code}: {err[-600:]}")
    code, report, err = bakes.bake_json(binary, manifest)
    if code != 0 or report is None or report["sources"]["decoded"] != 0:
        problems.append(f"round {n}: a second quiet bake was not quiet (exit {code}): {report and report['sources']} {err[-300:]}")
    # The clean bake: a copy of the sources as they are now (times kept), into an empty directory.
    clean = os.path.join(OUT, f"clean-{n}")
    shutil.copytree(sources, os.path.join(clean, "src"), ignore=shutil.ignore_patterns(".soak-*"))
    checks.write_manifest(os.path.join(clean, "soak.yaml"))
    code, report, err = bakes.bake_json(binary, os.path.join(clean, "soak.yaml"))
    if code != 0 or report is None or report["sources"]["failed"] != 0:
        problems.append(f"round {n}: the clean bake exited {code}, {report and report['sources']}: {err[-300:]}")
        return 0, False, False
    compared, found = checks.compare(read_table, tables, os.path.join(clean, "tables"))
    problems += [f"round {n}: {p}" for p in found]
    table_files = sorted(os.path.join(tables, f) for f in os.listdir(tables) if f.endswith(".imagetable"))
    verified = subprocess.run([binary, "verify", *table_files], capture_output=True)
    if verified.returncode != 0:
        problems.append(f"round {n}: verify exited {verified.returncode}: {verified.stderr.decode()[-600:]}")
    ran, full_problems, full_tables = diskfull.episode(binary, OUT, sources, checks.write_manifest, bakes.bake_json)
    problems += [f"round {n}: {p}" for p in full_problems]
    if full_tables and not full_problems:
        _, found = checks.compare(read_table, full_tables, os.path.join(clean, "tables"))
        problems += [f"round {n}: after a full disk: {p}" for p in found]
    diskfull.unmount(OUT)
    shutil.rmtree(clean)
    return compared, verified.returncode == 0, ran


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--kills", type=int, default=1000, help="run rounds until this many bakes were killed with SIGKILL")
    parser.add_argument("--rounds", type=int, default=6, help="run at least this many rounds")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    binary = os.path.join(os.path.abspath(args.bin), "imagetable")
    worker = os.path.join(os.path.abspath(args.bin), "imagetable-worker")
    bench = os.path.join(os.path.abspath(args.bin), "imagetable-bench")
    rng = random.Random(args.seed)
    read_table = checks.spec_reader()
    versions = make_versions()
    diskfull.unmount(OUT)
    shutil.rmtree(OUT, ignore_errors=True)
    sources, tables, manifest = os.path.join(OUT, "src"), os.path.join(OUT, "tables"), os.path.join(OUT, "soak.yaml")
    os.makedirs(os.path.join(sources, "sub"))
    checks.write_manifest(manifest)
    mutator = Mutator(sources, versions, random.Random(rng.random()))
    for name in NAMES[::2]:
        mutator.write_slowly(name, mutator.pick_bytes(name), truncate_first=True)
        mutator.remember(name)
    tally = dict(bakes=0, killed=0, kill9=0, graceful=0, exit3=0, verify=0, verify2=0, verify1=0)
    lock = threading.Lock()
    reads = dict(reads=0, consistent=0, busy=0, torn=0)
    compared = verified = full_disks = 0
    problems = []
    started = time.time()
    print(f"soak: seed {args.seed}, rounds of {args.seconds:g} s until {args.kills} kill -9 (at least {args.rounds} rounds), {binary}",
          flush=True)
    n = 0
    while n < args.rounds or tally["kill9"] < args.kills:
        n += 1
        stop = threading.Event()
        reader = reader_process(bench, tables, args.seconds)
        threads = [threading.Thread(target=mutator.run, args=(stop,)), threading.Thread(target=mutator.flip, args=(stop,))]
        threads += [threading.Thread(target=bakes.BakeLoop(binary, manifest, tables, random.Random(rng.random()), tally, problems, lock).run,
                                     args=(stop,)) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join()
        out, err = reader.communicate()
        counts = dict(zip(out.split()[::2], map(int, out.split()[1::2]))) if out.strip() else {}
        if reader.returncode != 0 or set(counts) != set(reads):
            problems.append(f"round {n}: the reader failed ({reader.returncode}): {err[-300:]}")
        for k in reads:
            reads[k] += counts.get(k, 0)
        if counts.get("torn", 0):
            problems.append(f"round {n}: the reader saw {counts['torn']} torn reads")
        c, ok, ran = round_checks(n, binary, worker, manifest, sources, tables, read_table, problems)
        compared, verified, full_disks = compared + c, verified + ok, full_disks + ran
        print(f"  round {n}: {tally['bakes']} bakes, {tally['kill9']} kill -9 and {tally['verify']} verify after a kill so far; {c} entries equal to a clean bake; "
              f"{counts.get('reads', 0)} reads; {len(problems)} problems", flush=True)
        if problems:
            break
    m = mutator.counts
    for p in problems:
        print(f"soak: error: {p}", file=sys.stderr)
    print(f"soak: {n} rounds, {time.time() - started:.0f} s, seed {args.seed}: "
          f"{tally['bakes']} bakes ({tally['kill9']} kill -9, {tally['killed'] - tally['kill9']} SIGTERM or SIGINT, "
          f"{tally['graceful']} of them stopped between sources and reported, {tally['exit3']} exit 3), "
          f"verify after each kill {tally['verify']} ({tally['verify2']} interrupted, {tally['verify1']} damaged), "
          f"{sum(m.values())} mutations ({m['slow']} slow, {m['atomic']} atomic, {m['inplace']} in place, "
          f"{m['delete']} deleted, {m['rename']} renamed, {m['rollback']} rolled back, {m['touch']} touched, {m['flip']} flipped); "
          f"{reads['reads']} reads ({reads['torn']} torn, {reads['busy']} busy); {full_disks} full disks; "
          f"{compared} entries equal to a clean bake, {len(problems)} problems, verify clean {verified}/{n}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

"""Sources that change without pause: versions to write, and the mutator that writes them."""
import os, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "photos")
NAMES = [f"a{i:02d}.jpg" for i in range(12)] + [f"sub/b{i}.jpg" for i in range(4)] + ["p0.png", "p1.png", "sub/p2.png"]


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
        self.counts = dict.fromkeys(["slow", "atomic", "inplace", "delete", "rename", "rollback", "touch", "flip"], 0)

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
        kind = self.rng.choice(["slow", "atomic", "inplace", "delete", "rename", "rollback", "touch"] if present else ["slow", "atomic"])
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
        elif kind == "touch":
            # A new time over the same bytes: the bake records it in the entries it keeps.
            os.utime(p)
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



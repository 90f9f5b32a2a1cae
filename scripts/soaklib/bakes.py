"""Bakes that run back to back and are killed at random, `verify` after each kill, and the
helpers that run one bake."""
import os, signal, subprocess, threading, json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KILL_RATE = 0.7  # the share of bakes given a kill at a random instant
SIGKILL_SHARE = 0.8  # the share of those kills sent as SIGKILL (the rest SIGTERM)


class BakeLoop:
    """Runs bakes back to back until told to stop, killing `kill_rate` of them at a random
    instant (`sigkill_share` of those with SIGKILL), and verifying the tables after each bake
    that a signal did kill. A kill timed after the bake had finished kills nothing and is not
    counted. `tally` and `problems` are shared with the other loop, so updates take `lock`."""

    def __init__(self, binary, manifest, tables, rng, tally, problems, lock,
                 kill_rate=KILL_RATE, sigkill_share=SIGKILL_SHARE):
        self.binary, self.manifest, self.tables, self.rng = binary, manifest, tables, rng
        self.tally, self.problems, self.lock = tally, problems, lock
        self.kill_rate, self.sigkill_share = kill_rate, sigkill_share

    def run(self, stop):
        while not stop.is_set():
            args = [self.binary, "bake", self.manifest, "--no-progress", "--lock-timeout", "300"]
            if self.rng.random() < 0.3:
                args.append("--prune")
            bake = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            killer = None
            if self.rng.random() < self.kill_rate:
                how = signal.SIGKILL if self.rng.random() < self.sigkill_share else self.rng.choice([signal.SIGTERM, signal.SIGINT])
                killer = threading.Timer(self.rng.uniform(0.003, 0.3), lambda: bake.poll() is None and bake.send_signal(how))
                killer.start()
            _, err = bake.communicate()
            if killer:
                killer.cancel()
            code = bake.returncode
            killed = code in (-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT)
            # SIGTERM and SIGINT during the render stop the bake between two sources: it reports
            # and then ends by the signal. Before the render they end it at once, as a kill.
            graceful = "[interrupted]" in err.decode(errors="replace")
            with self.lock:
                self.tally["bakes"] += 1
                self.tally["killed"] += killed
                self.tally["kill9"] += code == -signal.SIGKILL
                self.tally["graceful"] += graceful
                if graceful and code not in (-signal.SIGTERM, -signal.SIGINT):
                    self.problems.append(f"an interrupted bake ended with {code}, not by its signal: {err.decode(errors='replace')[-600:]}")
                self.tally["exit3"] += code == 3
                if not killed and code not in (0, 3):
                    self.problems.append(f"bake exited {code}: {err.decode(errors='replace')[-600:]}")
            if killed:
                self.verify_after_kill(code)

    def verify_after_kill(self, code):
        """`verify` right after a kill, while the other loop may be baking: 0 (sound) and 2
        (interrupted: the next bake completes it) are what a kill may leave; 1 is damage."""
        names = os.listdir(self.tables) if os.path.isdir(self.tables) else []
        tables = sorted(os.path.join(self.tables, f) for f in names if f.endswith(".imagetable"))
        if not tables:
            return  # killed before its first table was created
        done = subprocess.run([self.binary, "verify", *tables], capture_output=True)
        with self.lock:
            self.tally["verify"] += 1
            self.tally["verify2"] += done.returncode == 2
            self.tally["verify1"] += done.returncode not in (0, 2)
            if done.returncode not in (0, 2):
                self.problems.append(f"verify after a bake killed by signal {-code if code < 0 else code - 128} "
                                     f"exited {done.returncode}: {done.stderr.decode(errors='replace')[-600:]}")


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

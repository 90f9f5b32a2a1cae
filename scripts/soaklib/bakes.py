"""Bakes that run back to back and are killed at random, and the helpers that run one."""
import os, signal, subprocess, threading, json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class BakeLoop:
    """Runs bakes back to back until told to stop, killing some at a random instant."""

    def __init__(self, binary, manifest, rng, tally, problems, kill_rate=0.7):
        self.binary, self.manifest, self.rng, self.tally, self.problems = binary, manifest, rng, tally, problems
        self.kill_rate = kill_rate

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
            self.tally["kill9"] += code == -signal.SIGKILL
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



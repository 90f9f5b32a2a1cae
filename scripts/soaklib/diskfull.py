"""A full disk mid-bake: the output directory on a small tmpfs that fills up during the bake."""
import os, shutil, subprocess


def mount(path, size):
    os.makedirs(path, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True).returncode == 0


def episode(binary, work, sources, write_manifest, bake_json):
    """Bakes into a tmpfs too small for the tables, then grows it and bakes again.

    Returns (ran, problems, tables dir): ran is False where tmpfs cannot be mounted (not root,
    or a container that forbids it). The full bake must fail cleanly (exit 1, `no-space`, no
    signal); once there is room, the next bake must complete and converge.
    """
    full = os.path.join(work, "full")
    if os.path.ismount(full):
        subprocess.run(["umount", full], capture_output=True)
    shutil.rmtree(full, ignore_errors=True)
    if not mount(full, "600k"):
        return False, [], None
    problems = []
    try:
        os.symlink(sources, os.path.join(full, "src"))
        manifest = os.path.join(full, "soak.yaml")
        write_manifest(manifest)
        code, report, err = bake_json(binary, manifest, "--allow-outside-paths")
        fatal = (report or {}).get("fatal") or {}
        if code != 1 or fatal.get("code") != "no-space":
            problems.append(f"disk full: exit {code}, {fatal or err[-300:]} (expected exit 1, no-space)")
        subprocess.run(["mount", "-o", "remount,size=64m", full], check=True)
        code, report, err = bake_json(binary, manifest, "--allow-outside-paths")
        if code != 0:
            problems.append(f"disk freed: the next bake exited {code}: {err[-300:]}")
        return True, problems, os.path.join(full, "tables")
    except Exception as error:  # a problem to report, never a reason to leave the mount behind
        problems.append(f"disk full: {error}")
        return True, problems, None


def unmount(work):
    full = os.path.join(work, "full")
    if os.path.ismount(full):
        subprocess.run(["umount", full], capture_output=True)

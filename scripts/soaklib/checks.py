"""What must hold after each round: the manifest, the spec reader, the comparison with a clean bake."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPACITY = 32  # more slots than names (and the two hot files)
TIGHT = 8  # fewer slots than sources: the over-full rules, eviction


def spec_reader():
    """`read_table` from docs/FORMAT.md: the spec's reader checks our tables, not our code."""
    spec = open(os.path.join(ROOT, "docs", "FORMAT.md")).read()
    start = spec.index("<!-- python-reader:begin -->\n```python\n") + len("<!-- python-reader:begin -->\n```python\n")
    source = spec[start:spec.index("```\n<!-- python-reader:end -->")]
    scope = {"__name__": "spec_reader"}
    exec(compile(source, "docs/FORMAT.md", "exec"), scope)
    return scope["read_table"]


def write_manifest(path):
    """The soak's manifest, beside its `src` and `tables` directories: a family with a slot for
    every source, and one with fewer slots than sources (over-full: eviction and left-out keys)."""
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
  tight:
    sources: {sources}
    formats:
      few:
        size: 32x32
        style: 8BitGrayscale
        maximumCount: {TIGHT}
""")


def recorded_times(path):
    """key -> the source modification time each committed record holds (docs/FORMAT.md: the
    capacity at header offset 48, records of 256 bytes from 512, `state` at 16, `sourceModified`
    at 88, the key's length at 60 and its bytes at 96); the spec's reader does not return it."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    capacity, times = struct.unpack_from("<I", data, 48)[0], {}
    for i in range(capacity):
        r = 512 + i * 256
        if r + 256 > len(data) or struct.unpack_from("<I", data, r + 16)[0] != 1:
            continue
        key_len = struct.unpack_from("<H", data, r + 60)[0]
        times[data[r + 96:r + 96 + key_len].decode()] = struct.unpack_from("<q", data, r + 88)[0]
    return times


def compare(read_table, soaked, clean):
    """(entries compared, problems) between the soaked tables and the clean bake's: the same
    keys, and per key the same source UUID, rectangle, pixels and recorded source time (the
    clean bake's sources are copies with their times kept, so an entry whose source was touched
    without changing must have had its time updated)."""
    compared, problems = 0, []
    names = sorted(f for f in os.listdir(clean) if f.endswith(".imagetable"))
    if names != sorted(f for f in os.listdir(soaked) if f.endswith(".imagetable")):
        return 0, [f"different tables: {names} vs {sorted(os.listdir(soaked))}"]
    for name in names:
        _, want = read_table(os.path.join(clean, name))
        _, got = read_table(os.path.join(soaked, name))
        want_times, got_times = recorded_times(os.path.join(clean, name)), recorded_times(os.path.join(soaked, name))
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
                elif want_times.get(key) != got_times.get(key):
                    problems.append(f"{name}: {key}: records source time {got_times.get(key)}, a clean bake {want_times.get(key)}")
    return compared, problems



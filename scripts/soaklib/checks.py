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



"""bake-bench.py and floor-bench.py as modules, for the benchmarks that reuse their sources and
helpers (their names, which `make bench` and the README use, are not ones Python can import)."""
import importlib.util, os


def _load(module, filename):
    spec = importlib.util.spec_from_file_location(
        module, os.path.join(os.path.dirname(os.path.abspath(__file__)), filename))
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


bake_bench = _load("bake_bench", "bake-bench.py")
floor_bench = _load("floor_bench", "floor-bench.py")

"""bake-bench.py as a module, for the benchmarks that reuse its sources and helpers (its name,
which `make bench` and the README use, is not one Python can import)."""
import importlib.util, os

_spec = importlib.util.spec_from_file_location(
    "bake_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bake-bench.py"))
bake_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bake_bench)

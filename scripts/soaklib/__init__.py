"""The parts of `make soak` (scripts/soak.py)."""

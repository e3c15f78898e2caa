"""Figures: the benchmarks (run as scripts, ``python bench/load.py``) and the harness they
share with the tests (``bench.harness``). Speed is measured here, never asserted in tests."""

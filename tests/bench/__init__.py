"""Benchmarks: tools run from a checkout (`python -m tests.bench.NAME`), not part of the
product. Figures and what they mean are in BENCHMARKS.md."""

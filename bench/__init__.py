"""Benchmarks for elelem-kernel: `python -m bench` runs them all and prints a table.

Every figure is measured against a reference in the same run (the machine is shared and
noisy), as a median of several repetitions. See bench/README.md.
"""

"""Tests of the scripts in benchmarks/ (a package so that basenames may repeat across folders)."""

"""Tests of indefsvm.solvers (a package so that basenames may repeat across folders)."""

"""Tests of indefsvm.proxy.solvers (a package so that basenames may repeat across folders)."""

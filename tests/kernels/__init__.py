"""Tests of indefsvm.kernels (a package so that basenames may repeat across folders)."""

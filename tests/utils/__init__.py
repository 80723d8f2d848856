"""Tests of indefsvm.utils (a package so that basenames may repeat across folders)."""

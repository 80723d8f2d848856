"""Tests of indefsvm.linalg (a package so that basenames may repeat across folders)."""

"""Tests of indefsvm.proxy (a package so that basenames may repeat across folders)."""

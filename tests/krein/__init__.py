"""Tests of indefsvm.krein (a package so that basenames may repeat across folders)."""

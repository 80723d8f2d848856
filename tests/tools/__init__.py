"""Tests of the scripts in tools/ (a package so that basenames may repeat across folders)."""

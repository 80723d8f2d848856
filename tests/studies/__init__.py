"""Tests of indefsvm.studies (a package so that basenames may repeat across folders)."""

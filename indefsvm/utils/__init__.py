"""Plumbing shared by both paradigms: input checks, parameter constraints, file input, logging,
lazy imports, progress reporting and shared docstring paragraphs. Nothing here knows a
learning problem."""

"""Plumbing shared by both paradigms: input checks, parameter constraints, file input, logging,
lazy imports and progress reporting. Nothing here knows a learning problem."""

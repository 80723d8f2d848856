"""Plumbing shared by both paradigms: input checks, parameter constraints, file input, logging,
lazy imports and the module aliases of the old layout. Nothing here knows a learning problem."""

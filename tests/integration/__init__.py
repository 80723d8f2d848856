"""Cross-cutting tests: several layers end to end, README/docs, regression suites."""

"""The signature table of docs/design.md is the one the code has (issue 23: one table)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location(
        "signature_table", ROOT / "tools" / "signature_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_design_doc_holds_the_current_signature_table():
    tool = _tool()
    text = (ROOT / "docs" / "design.md").read_text()
    assert tool.document_block() in text, "stale: run python tools/signature_table.py --write"


def test_table_lists_every_parameter_of_solve():
    import inspect

    import indefsvm

    table = _tool().table()
    for name, p in inspect.signature(indefsvm.solve).parameters.items():
        if name in ("K0", "y") or p.kind is p.VAR_KEYWORD:
            continue
        assert f"| `{name}` |" in table

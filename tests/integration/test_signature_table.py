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


def test_a_stale_table_is_detected(tmp_path, monkeypatch):
    # The check above compares with the generator's own output, so make sure a doc whose table
    # differs in one cell is not accepted, and that --write repairs it.
    tool = _tool()
    doc = tmp_path / "design.md"
    fresh = tool.document_block()
    doc.write_text("intro\n" + fresh.replace("`10000`", "`9999`", 1) + "\nrest\n")
    assert fresh not in doc.read_text()
    monkeypatch.setattr(tool, "DOC", doc)
    assert tool.main(["--write"]) == 0
    assert doc.read_text() == "intro\n" + fresh + "\nrest\n"

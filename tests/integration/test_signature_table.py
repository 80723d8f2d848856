"""The signature table of docs/design.md is the one the code has (issue 23: one table)."""

from __future__ import annotations

from pathlib import Path

from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    return load_script("tools/signature_table.py")


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

"""The signature table of ``docs/design.md``: every public entry point's parameters in one table.

Rows are parameter names, columns the callables (``indefsvm.solve`` and every estimator), a cell
the default value: one glance shows that a concept has one name everywhere it appears.
``tests/integration/test_docs.py`` checks that the table in the docs is the one this prints.

Usage (from the repository root)::

    python tools/signature_table.py            # print the table
    python tools/signature_table.py --write    # replace the table in docs/design.md
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "design.md"
BEGIN = "<!-- signature-table:begin (python tools/signature_table.py --write) -->"
END = "<!-- signature-table:end -->"

#: Column title -> dotted path of the callable (functions first, then estimators by paradigm).
CALLABLES: dict[str, str] = {
    "solve": "indefsvm.solve",
    "IndefiniteSVC": "indefsvm.IndefiniteSVC",
    "IndefiniteSVR": "indefsvm.IndefiniteSVR",
    "IndefiniteOneClassSVM": "indefsvm.IndefiniteOneClassSVM",
    "PerturbSVC": "indefsvm.PerturbSVC",
    "SpectrumSVC": "indefsvm.SpectrumSVC",
    "DirectSVC": "indefsvm.DirectSVC",
    "ModSVC": "indefsvm.ModSVC",
    "KreinRegressor": "indefsvm.krein.KreinRegressor",
    "KreinClassifier": "indefsvm.krein.KreinClassifier",
    "KreinSVC": "indefsvm.krein.KreinSVC",
    "KreinSquaredHingeSVC": "indefsvm.krein.KreinSquaredHingeSVC",
    "KreinKernelRidge": "indefsvm.krein.KreinKernelRidge",
    "OngSubspaceRegressor": "indefsvm.krein.OngSubspaceRegressor",
    "SimilarityRidge": "indefsvm.krein.SimilarityRidge",
    "IndefiniteNystroem": "indefsvm.IndefiniteNystroem",
}


def _resolve(path: str):
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _parameters(obj) -> dict[str, str]:
    target = obj.__init__ if inspect.isclass(obj) else obj
    out = {}
    for name, p in inspect.signature(target).parameters.items():
        if name in ("self", "K0", "y", "X") or p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        default = "required" if p.default is inspect.Parameter.empty else repr(p.default)
        out[name] = default.replace("|", "\\|")
    return out


def table() -> str:
    """The markdown table (rows: parameters in order of first appearance; cells: defaults)."""
    columns = {title: _parameters(_resolve(path)) for title, path in CALLABLES.items()}
    rows: list[str] = []
    for params in columns.values():
        rows.extend(name for name in params if name not in rows)
    head = "| parameter | " + " | ".join(columns) + " |"
    rule = "|---" * (len(columns) + 1) + "|"
    lines = [head, rule]
    for name in rows:
        cells = [f"`{params[name]}`" if name in params else "" for params in columns.values()]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def document_block() -> str:
    return f"{BEGIN}\n{table()}\n{END}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/design.md in place")
    args = parser.parse_args(argv)
    if not args.write:
        print(table())
        return 0
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        print(f"{DOC} has no signature-table markers", file=sys.stderr)
        return 1
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    DOC.write_text(before + document_block() + after)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

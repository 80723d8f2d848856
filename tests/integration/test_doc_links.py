"""Files the documentation links or cites exist in the repository (issue 26, item 3).

``docs/scale.md`` cited ``results/scale/*.md`` tables that were never committed (``results/``
is git-ignored); they now live under ``docs/results/`` and are linked relative to the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = []
    for match in re.finditer(r"\]\(([^)\s]+)\)", page.read_text()):
        target = match.group(1).split("#")[0]
        if target and "://" not in target and not target.startswith("mailto:"):
            if not (page.parent / target).exists():
                missing.append(target)
    assert missing == []


def test_scale_result_tables_cited_by_the_docs_are_committed():
    text = (ROOT / "docs" / "scale.md").read_text()
    cited = set(re.findall(r"results/scale/[\w/]+\.md", text))
    assert cited, "docs/scale.md cites its result tables"
    for path in cited:
        assert (ROOT / "docs" / path).is_file(), path


#: placeholders the docs use for "a test file" in general, not a file
_PATTERN_PATHS = {"tests/test_x.py"}


@pytest.mark.parametrize(
    "page",
    PAGES + [ROOT / "tools" / "mutation.py", ROOT / "pyproject.toml"],
    ids=lambda p: p.name,
)
def test_cited_test_files_exist(page):
    """Test files named in the docs (``tests/...py``, with ``::test`` when given) exist.

    Tests mirror the package and move with it (issue 23); a stale path in a page is a dead
    pointer for a reader who wants the check behind a claim.
    """
    missing = []
    for match in re.finditer(r"tests/[\w/]+\.py(?:::\s*(\w+))?", page.read_text()):
        path = match.group(0).split("::")[0]
        if path in _PATTERN_PATHS:
            continue
        file = ROOT / path
        if not file.is_file():
            missing.append(path)
        elif match.group(1) and not re.search(rf"def {match.group(1)}\b", file.read_text()):
            missing.append(f"{path}::{match.group(1)}")
    assert missing == []


_SOURCES = PAGES + sorted((ROOT / "tests").glob("**/*.py")) + sorted((ROOT / "tools").glob("*.py"))


def test_cited_docs_and_tools_files_exist():
    """Files under ``docs/`` and ``tools/`` named in the docs, tests and tools exist (the
    mutation-survivor lists moved from ``docs/`` to ``tools/mutation_survivors/``)."""
    pattern = re.compile(r"(?<![\w/.])((?:docs|tools)/[\w/.-]+\.(?:txt|md|py|rst|png|csv|sh))")
    missing = sorted(
        {
            f"{source.relative_to(ROOT)}: {match.group(1)}"
            for source in _SOURCES
            for match in pattern.finditer(source.read_text())
            if not (ROOT / match.group(1)).exists()
        }
    )
    assert missing == []


def test_docs_hold_no_developer_data():
    """docs/ is for readers: the mutation runs' survivor lists live in tools/."""
    assert not list((ROOT / "docs").glob("mutation_survivors_*"))
    assert len(list((ROOT / "tools" / "mutation_survivors").glob("mutation_survivors_*.txt"))) == 11


def test_index_page_links_every_guide_and_the_api_reference():
    """docs/index.md is the front door: every page of docs/ and the API reference are linked
    from it, and the API reference's index names every page too."""
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)#\s]+)\)", index))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - linked == set()
    assert "api/index.rst" in linked and "../README.md" in linked
    api_index = (ROOT / "docs" / "api" / "index.rst").read_text()
    assert "docs/index.md" in api_index
    assert {p for p in pages if f"docs/{p}" not in api_index} == set()

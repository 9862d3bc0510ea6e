"""House rules of the pages that a reader notices: short lines, the chapter
skeleton, and exercises that each have a solution and a hidden check."""

from __future__ import annotations

import re

import jupytext
import pytest

from conftest import ROOT, toc_pages

MAX_CODE_LINE = 80      # what fits in a code cell at 1280 px without scrolling
MAX_PAGE_LINES = 500
# Chapters and the "Going further" pages share the chapter skeleton.
CHAPTERS = [p for p in toc_pages() if p.parts[0] in ("chapters", "further")]


def _visible_code_cells(page):
    nb = jupytext.read(ROOT / page, fmt="md:myst")
    return [c for c in nb.cells
            if c.cell_type == "code" and "remove-cell" not in c.metadata.get("tags", [])]


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_visible_code_lines_fit(page):
    long = [(len(line), line) for cell in _visible_code_cells(page)
            for line in cell.source.splitlines() if len(line) > MAX_CODE_LINE]
    assert not long, f"{page}: code lines over {MAX_CODE_LINE} characters:\n" + "\n".join(
        f"  {n}: {line}" for n, line in long)


@pytest.mark.parametrize("page", CHAPTERS, ids=str)
def test_chapter_skeleton(page):
    text = (ROOT / page).read_text()
    assert len(text.splitlines()) < MAX_PAGE_LINES, f"{page} is over {MAX_PAGE_LINES} lines"
    assert "**What you will learn.**" in text and "**What you need.**" in text
    assert re.search(r"^## Summary\b", text, re.M), f"{page}: no Summary section"
    assert re.search(r"^## Exercises$", text, re.M), f"{page}: no Exercises section"
    first = jupytext.read(ROOT / page, fmt="md:myst").cells
    code = [c for c in first if c.cell_type == "code"]
    assert "remove-cell" in code[0].metadata.get("tags", []), "first cell must be the hidden setup"
    assert 'TF_ENABLE_ONEDNN_OPTS"] = "0"' in code[0].source


@pytest.mark.parametrize("page", CHAPTERS, ids=str)
def test_exercises_have_solutions_and_checks(page):
    text = (ROOT / page).read_text()
    labels = re.findall(r"```\{exercise\}[^\n]*\n:label: (\S+)", text)
    assert len(labels) >= 3, f"{page}: {len(labels)} exercises, at least 3 expected"
    for label in labels:
        start = re.search(r"\{solution-start\} " + re.escape(label) + r"\n:class: dropdown", text)
        assert start, f"{page}: exercise {label} has no dropdown solution"
        after = text[start.end():]
        end = after.index("{solution-end}")
        rest = after[end:]
        nxt = rest.find("{exercise}")
        tail = rest if nxt < 0 else rest[:nxt]
        assert ":tags: [remove-cell]" in tail and "assert" in tail, (
            f"{page}: exercise {label} has no hidden check cell after its solution")

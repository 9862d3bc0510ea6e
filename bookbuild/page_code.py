"""The pages' code cells as notebooks, for ruff (tests/test_lint.py and
``python -m bookbuild format``).

A page is MyST Markdown; ruff reads notebooks. ``export`` writes each page
that has code as a notebook (jupytext) under a folder, at the page's own
relative path, so that ruff's messages name the page and the cell.
``import_cells`` carries code cells that ruff (or a person) changed in those
notebooks back into the pages: each changed cell's source is replaced, as
text, inside its own code-cell block, so nothing else of the page (its prose,
cell options, blank lines) is rewritten.

Pages are linted at the code's own width (pyproject.toml); the lines a
reader sees are held to 80 columns, what a code cell shows at 1280 px
without scrolling, by tests/test_style.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from bookbuild.pages import ROOT, toc_pages

# The book's Python outside the pages.
CODE_FOLDERS = ["src", "tests", "bookbuild", "_ext", "benchmarks"]
CONFIG = ROOT / "pyproject.toml"
# Where a MyST code cell starts: its fence, then its options (":key: value"
# lines, or a YAML block between "---" lines), then a blank line if any.
_FENCE = re.compile(r"^```\{code-cell\}[^\n]*\n", re.M)


def ruff_command() -> str:
    """The venv's ruff (pinned in requirements-dev.txt), else one on PATH."""
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        raise SystemExit("ruff is not installed (it is pinned in requirements-dev.txt)")
    return found


def ruff(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """ruff with the book's configuration."""
    return subprocess.run(
        [ruff_command(), *args, "--config", str(CONFIG), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def export(folder: Path) -> list[Path]:
    """Every page with code, as ``folder/<page>.ipynb``; returns the pages."""
    import jupytext

    exported = []
    for page in toc_pages():
        nb = jupytext.read(ROOT / page, fmt="md:myst")
        if any(cell.cell_type == "code" for cell in nb.cells):
            target = folder / page.with_suffix(".ipynb")
            target.parent.mkdir(parents=True, exist_ok=True)
            jupytext.write(nb, target, fmt="ipynb")
            exported.append(page)
    return exported


def _cell_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each code cell's source in a MyST page, in order."""
    spans = []
    for fence in _FENCE.finditer(text):
        start = fence.end()
        if text.startswith("---\n", start):  # options as a YAML block
            start = text.index("\n---\n", start) + len("\n---\n")
        else:
            while re.match(r":[\w-]+:", text[start:]):
                start = text.index("\n", start) + 1
        if text.startswith("\n", start) and start != fence.end():
            start += 1  # the blank line between options and code
        end = text.index("\n```", start - 1)
        spans.append((start, max(start, end + 1)))
    return spans


def import_cells(page: Path, notebook: Path) -> bool:
    """Put the notebook's code cells back into the page; True if it changed."""
    import jupytext

    text = page.read_text()
    old = [c.source for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "code"]
    new = [c.source for c in jupytext.read(notebook).cells if c.cell_type == "code"]
    spans = _cell_spans(text)
    if not len(old) == len(new) == len(spans):
        raise ValueError(f"{page}: {len(old)} code cells, {len(new)} in {notebook}")
    for (start, end), before, after in reversed(list(zip(spans, old, new, strict=True))):
        if text[start:end].rstrip("\n") != before.rstrip("\n"):
            raise ValueError(f"{page}: a code cell's source was not where it was expected")
        if before != after:
            text = text[:start] + after.rstrip("\n") + "\n" + text[end:]
    if text != page.read_text():
        page.write_text(text)
        return True
    return False


def fix_pages(folder: Path) -> list[Path]:
    """``ruff check --fix`` on every page's code cells, written back into the
    pages; returns the pages that changed. What ruff cannot fix itself,
    ``tests/test_lint.py`` lists. (Pages are linted, not formatted: see
    tests/test_lint.py.)"""
    pages = export(folder)
    ruff(["check", "--fix", "--quiet", "."], folder)
    return [p for p in pages if import_cells(ROOT / p, folder / p.with_suffix(".ipynb"))]

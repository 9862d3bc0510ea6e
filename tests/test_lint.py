"""ruff (pinned in requirements-dev.txt, configured in pyproject.toml) finds
nothing in the book's Python: the package, the tests, the build, the
extensions, the benchmarks, and the code cells of every page.

The pages are MyST Markdown: bookbuild/page_code.py turns each into a
notebook in a temporary folder (same relative path, so ruff's messages name
the page and the cell), and ruff lints notebooks itself (IPython magics
included). The pages are linted but not formatted: their code is laid out
by hand for reading (aligned comments, a long call wrapped in two lines),
and ruff format at the 80 columns a cell shows without scrolling
(tests/test_style.py holds the visible lines to that) made them 388 lines
longer and put eight pages over the 500-line limit.
``.venv/bin/python -m bookbuild format`` applies ruff's formatting and fixes
to the Python, and its fixes to the pages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import page_code
from conftest import ROOT

COMMANDS = {
    "check": ["check", "--no-fix", "--output-format", "concise"],
    "format": ["format", "--check", "--diff"],
}
HOW = "(`.venv/bin/python -m bookbuild format` fixes what ruff can)"


@pytest.mark.parametrize("command", COMMANDS)
def test_code(command):
    result = page_code.ruff([*COMMANDS[command], *page_code.CODE_FOLDERS], ROOT)
    assert result.returncode == 0, f"ruff {command} {HOW}:\n{result.stdout}{result.stderr}"


@pytest.fixture(scope="module")
def page_notebooks(tmp_path_factory) -> Path:
    """Every page with code, as a notebook under a temporary folder."""
    folder = tmp_path_factory.mktemp("pages")
    assert page_code.export(folder), "no page has code?"
    return folder


def test_pages_code_cells(page_notebooks):
    result = page_code.ruff([*COMMANDS["check"], "."], page_notebooks)
    assert result.returncode == 0, (
        f"ruff check on the pages' code cells {HOW} (as notebooks; 'cell N' counts "
        f"every cell of the page, Markdown ones too):\n{result.stdout}{result.stderr}"
    )


def test_cells_go_back_where_they_came_from(tmp_path):
    """import_cells changes a page only inside its code cells: a page whose
    notebook is unchanged stays byte for byte the same."""
    page = tmp_path / "page.md"
    page.write_text((ROOT / "chapters" / "06_matmul_grad.md").read_text())
    notebook = tmp_path / "page.ipynb"
    import jupytext

    nb = jupytext.read(page, fmt="md:myst")
    jupytext.write(nb, notebook, fmt="ipynb")
    assert not page_code.import_cells(page, notebook)
    nb.cells[[c.cell_type for c in nb.cells].index("code")].source = "x = 1"
    jupytext.write(nb, notebook, fmt="ipynb")
    before = page.read_text()
    assert page_code.import_cells(page, notebook)
    after = page.read_text()
    assert "x = 1\n```" in after
    assert len(after.splitlines()) <= len(before.splitlines())
    assert before.split("```{code-cell}")[0] == after.split("```{code-cell}")[0]

"""ruff (pinned in requirements-dev.txt, configured in pyproject.toml) finds
nothing in the book's Python: the package, the tests, the build, the
extensions, the benchmarks, and the code cells of every page.

The pages are MyST Markdown: jupytext turns each into a notebook in a
temporary folder (same relative path, so ruff's messages name the page and
the cell), and ruff lints notebooks itself (IPython magics included).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, toc_pages

FOLDERS = ["src", "tests", "bookbuild", "_ext", "benchmarks"]
CONFIG = ROOT / "pyproject.toml"
COMMANDS = {
    "check": ["check", "--no-fix", "--output-format", "concise"],
    "format": ["format", "--check", "--diff"],
}


def ruff(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed (it is pinned in requirements-dev.txt)")
    return subprocess.run(
        [exe, *args, "--config", str(CONFIG), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_code(command):
    result = ruff([*COMMANDS[command], *FOLDERS], ROOT)
    assert result.returncode == 0, f"ruff {command}:\n{result.stdout}{result.stderr}"


@pytest.fixture(scope="module")
def page_notebooks(tmp_path_factory) -> Path:
    """Every page with code, as a notebook under a temporary folder."""
    import jupytext

    folder = tmp_path_factory.mktemp("pages")
    for page in toc_pages():
        nb = jupytext.read(ROOT / page, fmt="md:myst")
        if any(cell.cell_type == "code" for cell in nb.cells):
            (folder / page).parent.mkdir(parents=True, exist_ok=True)
            jupytext.write(nb, folder / page.with_suffix(".ipynb"), fmt="ipynb")
    return folder


@pytest.mark.parametrize("command", COMMANDS)
def test_pages_code_cells(command, page_notebooks):
    assert list(page_notebooks.rglob("*.ipynb")), "no page has code?"
    result = ruff([*COMMANDS[command], "."], page_notebooks)
    assert result.returncode == 0, (
        f"ruff {command} on the pages' code cells (as notebooks; 'cell N' counts every "
        f"cell of the page, Markdown ones too):\n{result.stdout}{result.stderr}"
    )

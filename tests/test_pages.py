"""Every page in _toc.yml runs, in its notebook form, from a clean kernel.

Each MyST page is read with jupytext, written to a temporary .ipynb, read
back and executed with nbclient in the page's own folder: this proves that
both the book form and the notebook form a reader downloads run.  A new
chapter is tested as soon as it is listed in _toc.yml.
"""

from __future__ import annotations

import os

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from conftest import LOG_NOISE, ROOT, toc_pages


def _failing_cell(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return index, cell
    return None, None


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_page_executes(page, tmp_path):
    nb = jupytext.read(ROOT / page, fmt="md:myst")
    ipynb = tmp_path / page.with_suffix(".ipynb").name
    jupytext.write(nb, ipynb)
    nb = nbformat.read(ipynb, as_version=4)
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3",
        resources={"metadata": {"path": str((ROOT / page).parent)}},
    )
    try:
        client.execute(env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    except CellExecutionError as exc:
        index, cell = _failing_cell(nb)
        pytest.fail(f"{page}: cell {index} failed\n--- source ---\n"
                    f"{cell.source if cell else '?'}\n--- error ---\n{exc}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        for out in cell.get("outputs", []):
            text = out.get("text", "") or str(out.get("data", {}).get("text/plain", ""))
            assert out.get("name") != "stderr", f"{page}: cell {index} wrote to stderr:\n{text}"
            for word in LOG_NOISE:
                assert word not in text, f"{page}: cell {index} printed {word!r}:\n{text}"

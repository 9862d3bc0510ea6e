"""Every page in _toc.yml runs, in its notebook form, from a clean kernel.

Each MyST page is read with jupytext, written to a temporary .ipynb, read
back and executed with nbclient in the page's own folder (conftest's
``execute_page``): this proves that both the book form and the notebook form
a reader downloads run.  A new chapter is tested as soon as it is listed in
_toc.yml.

The build executes the pages in kernels forked from one process that has
already imported TensorFlow (_ext/kernel_zygote.py). Each test here also
compares, cell by cell, the kinds of output (stream, figure, glued value,
...) that its ordinary fresh kernel produced with those the build cached:
a forked kernel that lost a figure or printed something extra fails it.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, build_helper, execute_page, toc_pages


def _output_kinds(nb) -> list[list[tuple]]:
    """Per code cell, the kinds of its outputs. A stream may arrive in one piece
    or several (it depends on when it was flushed), so consecutive pieces of
    one stream count once."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kinds = []
        for out in cell.get("outputs", []):
            kind = (out["output_type"], out.get("name"), tuple(sorted(out.get("data", {}))))
            if not (kinds and kind[0] == "stream" and kinds[-1] == kind):
                kinds.append(kind)
        cells.append(kinds)
    return cells


def _cached(page):
    """The notebook the build executed for ``page``, or None (not built, or stale)."""
    from jupyter_cache import get_cache

    helper = build_helper()
    if not (helper.CACHE / "global.db").exists():
        return None
    cache = get_cache(helper.CACHE)
    try:
        record = cache.match_cache_notebook(helper.read(ROOT / page))
    except KeyError:
        return None
    return cache.get_cache_bundle(record.pk).nb


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_page_executes(page, tmp_path):
    nb = execute_page(page, tmp_path)
    cached = _cached(page)
    if cached is not None:
        assert _output_kinds(cached) == _output_kinds(nb), (
            f"{page}: the build's kernel and a fresh kernel made different kinds of output")

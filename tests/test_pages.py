"""Every page in _toc.yml runs, in its notebook form, from a clean kernel.

Each MyST page is read with jupytext, written to a temporary .ipynb, read
back and executed with nbclient in the page's own folder (conftest's
``execute_page``): this proves that both the book form and the notebook form
a reader downloads run.  A new chapter is tested as soon as it is listed in
_toc.yml.
"""

from __future__ import annotations

import pytest

from conftest import execute_page, toc_pages


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_page_executes(page, tmp_path):
    execute_page(page, tmp_path)

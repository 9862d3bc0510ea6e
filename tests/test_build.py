"""The build helper executes exactly the pages the book build would execute."""

from __future__ import annotations

import yaml

from conftest import ROOT, build_helper, toc_pages


def test_parallel_execution_covers_the_executed_pages():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    excluded = set(config["execute"]["exclude_patterns"])
    expected = {str(p) for p in toc_pages()} - excluded
    got = {str(p.relative_to(ROOT)) for p in build_helper().book_pages()}
    assert got == expected
    assert excluded <= {str(p) for p in toc_pages()}, "exclude_patterns name pages not in the book"


def test_excluded_pages_have_no_code():
    import jupytext

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    for page in config["execute"]["exclude_patterns"]:
        nb = jupytext.read(ROOT / page, fmt="md:myst")
        assert not [c for c in nb.cells if c.cell_type == "code"], f"{page} has code but is not executed"


def test_makefile_runs_the_helper_before_jupyter_book():
    makefile = (ROOT / "Makefile").read_text()
    assert makefile.index("_ext/execute_pages.py") < makefile.index("jupyter-book build")

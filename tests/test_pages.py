"""Every page in _toc.yml runs, in its notebook form.

Each MyST page is read with jupytext, written to a temporary .ipynb, read
back and executed with nbclient in the page's own folder (conftest's
``execute_page``): this proves that both the book form and the notebook form
a reader downloads run.  A new chapter is tested as soon as it is listed in
_toc.yml.

Each page runs twice in one kernel, every cell in order each time, as a
reader's second Run All in JupyterLab or on Binder does, and in the second
run each cell runs twice in a row, as when a reader runs a cell again: a page
must not register a name twice, count what only a first trace does, or leave
state that its second run, or a cell run again, trips over. Both runs are
compared, cell by cell, with the build's: the same kinds of output (stream,
figure, glued value, ...), from the page's two forms.

The kernels are forked from a process that has imported TensorFlow once,
as in the build (bookbuild/kernel_zygote.py; tests/test_build.py checks that such
a kernel starts in the page's folder with its own environment and shows
figures). The pages that time something run their first run with clocks as
a busy machine shows them (tests/test_load.py says why), and their second,
with the real clocks, is the re-run check.
The pages whose numbers depend on kernels run twice in
tests/test_portability.py instead, with other kernels chosen (one page's two
runs serve both checks). Pages also run in ordinary fresh kernels in
tests/test_lab.py (in JupyterLab).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import (
    CLOCKS,
    NOISY_CLOCKS,
    REAL_CLOCKS,
    assert_same_output_kinds_as_the_build,
    execute_page,
    timed_pages,
    toc_pages,
)
from test_portability import KERNEL_PAGES

TIMED = set(timed_pages())
PAGES = [p for p in toc_pages() if p.as_posix() not in KERNEL_PAGES]


def test_every_page_runs_twice_here_or_with_other_kernels():
    assert set(KERNEL_PAGES) <= {p.as_posix() for p in toc_pages()}
    assert not TIMED & {Path(p) for p in KERNEL_PAGES}  # its load test is here
    assert len(PAGES) + len(KERNEL_PAGES) == len(toc_pages())


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_page_executes_twice(page, tmp_path, request, monkeypatch):
    for key, value in request.getfixturevalue("zygote_env").items():
        monkeypatch.setenv(key, value)
    before_run, read = {}, {}
    if page in TIMED:  # the first run is the load test (tests/test_load.py)
        before_run = {0: NOISY_CLOCKS, 1: REAL_CLOCKS}

    def after_run(number, printed):
        if number == 1 and page in TIMED:
            read.update(line.split() for line in printed.splitlines())

    for nb in execute_page(page, tmp_path, runs=2, before_run=before_run, after_run=after_run):
        assert_same_output_kinds_as_the_build(page, nb)
    if page in TIMED:
        assert read.keys() == set(CLOCKS), read
        assert sum(map(int, read.values())), f"{page} read none of the noisy clocks {CLOCKS}"

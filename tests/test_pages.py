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
figures). The pages that time something are the exception: they run in an
ordinary fresh kernel, the first run while every core is kept busy
(tests/test_load.py says why): their first run is the load test, and their
second, on the machine as it is, the re-run check (the load is not what it
checks, and the busy loops would slow every other test meanwhile).
The pages whose numbers depend on kernels run twice in
tests/test_portability.py instead, with other kernels chosen (one page's two
runs serve both checks). Pages also run in ordinary fresh kernels in
tests/test_lab.py (in JupyterLab).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from conftest import assert_same_output_kinds_as_the_build, execute_page, timed_pages, toc_pages
from test_portability import KERNEL_PAGES

TIMED = set(timed_pages())
PAGES = [p for p in toc_pages() if p.as_posix() not in KERNEL_PAGES]


def test_every_page_runs_twice_here_or_with_other_kernels():
    assert set(KERNEL_PAGES) <= {p.as_posix() for p in toc_pages()}
    assert not TIMED & {Path(p) for p in KERNEL_PAGES}  # a timed page runs under load here
    assert len(PAGES) + len(KERNEL_PAGES) == len(toc_pages())


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_page_executes_twice(page, tmp_path, request, monkeypatch):
    after_run = None
    if page in TIMED:
        busy = request.getfixturevalue("busy_cores")  # an ordinary fresh kernel, under load
        if busy.count == 0:
            warnings.warn(f"MATGRAD_LOAD_TEST=0: {page} ran on an idle machine", stacklevel=1)
        else:
            assert busy.count == busy.running() == (os.cpu_count() or 1)

            def after_run(number):  # the first run was the load test
                if number == 0:
                    assert busy.running() == busy.count, "a busy loop ended during the load test"
                    busy.stop()

    else:
        for key, value in request.getfixturevalue("zygote_env").items():
            monkeypatch.setenv(key, value)
    for nb in execute_page(page, tmp_path, runs=2, after_run=after_run):
        assert_same_output_kinds_as_the_build(page, nb)

"""Pages that measure time still pass when the machine is busy.

A reader's laptop is rarely idle. Every page that times something with
``matgrad.timing`` (found by searching the pages, so a new one is picked up)
is executed, in its notebook form, while one busy-loop process per core
keeps every core at 100 %. What a page asserts about cost must be a count
(multiplications, passes, bytes), or a timing comparison whose margin dwarfs
the noise that this load adds; such a page passes here every time.

MATGRAD_LOAD_TEST=0 skips it (with a message), e.g. to check the rest of a
build on a branch whose pages are known to fail it; the test itself is real.

The busy loops are separate processes with a hard deadline of their own (they
exit by themselves even if pytest is killed) and are terminated in
``finally`` when the test ends.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import time

import pytest

from conftest import ROOT, assert_same_output_kinds_as_the_build, execute_page, toc_pages

# A page measures time when it uses matgrad.timing's timers (not just its
# format_bytes helper).
TIMERS = re.compile(r"\b(best_time|median_time|measure)\(")
TIMED_PAGES = [
    p
    for p in toc_pages()
    if "matgrad.timing" in (text := (ROOT / p).read_text()) and TIMERS.search(text)
]
DEADLINE = 600  # seconds: a busy loop never outlives this, whatever happens to pytest


def _spin(deadline: float) -> None:
    x = 0
    while time.monotonic() < deadline:
        for _ in range(100_000):
            x += 1


@pytest.fixture
def busy_cores():
    """Keep every core busy (one spinning process per core) for the test's duration."""
    if os.environ.get("MATGRAD_LOAD_TEST") == "0":
        pytest.skip("MATGRAD_LOAD_TEST=0: the timed pages were not run on a busy machine")
    ctx = mp.get_context("spawn")  # no copy of pytest's state, no inherited threads
    deadline = time.monotonic() + DEADLINE
    procs = [
        ctx.Process(target=_spin, args=(deadline,), daemon=True) for _ in range(os.cpu_count() or 1)
    ]
    try:
        for proc in procs:
            proc.start()
        yield len(procs)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():  # pragma: no cover - terminate() was ignored
                proc.kill()
                proc.join()


def test_some_pages_measure_time():
    assert TIMED_PAGES, "no page uses matgrad.timing's timers: the load test would test nothing"


@pytest.mark.parametrize("page", TIMED_PAGES, ids=str)
def test_timed_page_passes_on_a_busy_machine(page, busy_cores, tmp_path):
    assert busy_cores == (os.cpu_count() or 1)
    nb = execute_page(page, tmp_path)  # an ordinary fresh kernel, not the build's forked one
    assert_same_output_kinds_as_the_build(page, nb)

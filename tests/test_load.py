"""Pages that measure time still pass when the machine is busy.

A reader's laptop is rarely idle. Every page that times something with
``matgrad.timing`` (conftest's ``timed_pages``: found by searching the pages,
so a new one is picked up) is executed, in its notebook form, in an ordinary
fresh kernel (not the build's forked one), while one busy-loop process per
core keeps every core at 100 % (conftest's ``busy_cores``). What a page
asserts about cost must be a count (multiplications, passes, bytes), or a
timing comparison whose margin dwarfs the noise that this load adds; such a
page passes here every time.

These runs are tests/test_pages.py's own: it runs each timed page twice in
one kernel, the first run under this load (the load test; the busy loops
end after it) and the second as the re-run check, so no page is executed a
third time for this purpose alone.

MATGRAD_LOAD_TEST=0 runs the timed pages there on an idle machine instead,
with a warning, e.g. to check the rest of a build on a branch whose pages
are known to fail it; the test itself is real.
"""

from __future__ import annotations

import os
import time

from conftest import timed_pages


def test_some_pages_measure_time():
    assert timed_pages(), "no page uses matgrad.timing's timers: the load test would test nothing"


def test_busy_cores_keep_every_core_busy(busy_cores):
    """While the fixture holds, this process gets well under a core: every
    core is shared with a busy loop."""
    if busy_cores.count == 0:
        return  # MATGRAD_LOAD_TEST=0
    assert busy_cores.count == busy_cores.running() == (os.cpu_count() or 1)
    time.sleep(1)  # the busy loops are running
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < 1.0:
        pass
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    assert share < 0.8, f"this process got {share:.0%} of a core: the cores are not busy"
    busy_cores.stop()
    assert busy_cores.running() == 0

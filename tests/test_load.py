"""Pages that time something pass whatever their clocks say.

A reader's laptop is rarely idle, and a timing taken there can come out many
times longer than the build machine's, in any proportion between two
routes. So a page may show timings, but what it asserts about cost must be
a count (multiplications, passes, bytes); a comparison of timings, or a
number chosen from them, would pass on one machine and fail on another.

The test: every page whose code reads a clock (conftest's ``timed_pages``:
matgrad.timing's timers, timeit, or the time module's ``perf_counter``,
``thread_time`` and ``process_time``; found by searching the pages, so a new
one is picked up) runs its first run with clocks as a busy machine shows
them (conftest's ``NOISY_CLOCKS``): at every reading a clock adds up to 20
times the interval since its last reading, and now and then 50 ms. Every
timing then comes out too long, by a different factor each time, so any
assert that compares timings, or a number chosen from them, meets
comparisons turned around. The clocks are seeded, so a failure repeats.

These runs are tests/test_pages.py's own: the first run of a timing page is
the load test, and the second, with the real clocks back, the re-run check,
so no page runs a third time for this purpose. (An earlier version kept
every core busy with spinning processes during the first run instead: a
real load, but one that took the cores from every other test meanwhile and
left the slowdown to chance.)
"""

from __future__ import annotations

import subprocess
import sys

from conftest import CLOCKS, NOISY_CLOCKS, REAL_CLOCKS, timed_pages


def test_some_pages_measure_time():
    assert timed_pages(), "no page reads a clock: the load test would test nothing"


def test_noisy_clocks_only_add_time_turn_comparisons_around_and_go_back():
    """In a fresh interpreter: every noisy interval is at least the real one,
    some are many times longer, a short call sometimes measures longer than
    one ten times longer, and REAL_CLOCKS restores the real clocks and reports
    how often each was read."""
    code = (
        NOISY_CLOCKS
        + f"CLOCK_NAMES = {CLOCKS!r}\n"
        + """
import time
def work(n):
    x = 0
    for i in range(n):
        x += i
def interval(clock, n):
    start = clock()
    real = clock.state["last"]  # the real reading behind it
    work(n)
    noisy = clock() - start
    return noisy, clock.state["last"] - real
ratios, turned = [], 0
for _ in range(100):
    for name in CLOCK_NAMES:
        clock = getattr(time, name)
        short, real_short = interval(clock, 2_000)
        long_, real_long = interval(clock, 20_000)
        ratios.append(short / real_short if real_short else 1.0)
        turned += short > long_
print("min", min(ratios), "max", max(ratios), "turned", turned)
"""
        + REAL_CLOCKS
        + """
assert all(not hasattr(getattr(time, n), "state") for n in CLOCK_NAMES)
"""
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    stats = dict(zip(out[0:6:2], map(float, out[1:6:2]), strict=True))
    assert stats["min"] >= 1, stats  # noise only adds time
    assert stats["max"] > 5, stats  # and sometimes much of it
    assert stats["turned"] > 0, stats  # a ten times longer call measured shorter
    readings = dict(zip(out[6::2], map(int, out[7::2]), strict=True))
    assert readings.keys() == set(CLOCKS) and all(n >= 400 for n in readings.values()), readings

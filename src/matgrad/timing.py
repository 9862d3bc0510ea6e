"""Small, honest timings for the live measurements in the book.

Noise on a shared machine only ever adds time, so the book reports the
*best* (minimum) of several repeats, the convention of :mod:`timeit`;
:func:`measure` returns the median as well, for pages that show both.
Timings are shown, never asserted with thin margins: what a page asserts
about cost is a count.
"""

from __future__ import annotations

import statistics
import time
from typing import NamedTuple

import numpy as np

from ._checks import check_callable


class Timing(NamedTuple):
    """Seconds per call: the minimum and the median over the repeats."""

    best: float
    median: float


def measure(fn, repeat: int = 5, number: int = 1, warmup: int = 1) -> Timing:
    """Time ``number`` calls of ``fn()``, ``repeat`` times; seconds per call.

    ``warmup`` calls run first and are not timed (tracing, caches).
    """
    check_callable(fn, "fn")
    if repeat < 1 or number < 1 or warmup < 0:
        raise ValueError(
            f"repeat and number must be >= 1 and warmup >= 0, got {repeat}, {number}, {warmup}"
        )
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return Timing(min(runs), statistics.median(runs))


def best_time(fn, repeat: int = 5, number: int = 1, warmup: int = 1) -> float:
    """Minimum wall time in seconds per call over ``repeat`` runs (see :func:`measure`)."""
    return measure(fn, repeat, number, warmup).best


def median_time(fn, repeat: int = 5, number: int = 1, warmup: int = 1) -> float:
    """Median wall time in seconds per call over ``repeat`` runs (see :func:`measure`)."""
    return measure(fn, repeat, number, warmup).median


def format_bytes(n: float) -> str:
    """Binary-prefixed size: ``format_bytes(2**28) == '256 MiB'``."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if float(n).is_integer() else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def fitted_slope(sizes, values, last: int = 3) -> float:
    """Slope of ``log(values)`` against ``log(sizes)`` over the ``last`` largest sizes.

    The exponent p of a cost that grows like ``n**p`` near the largest sizes
    measured (least squares on the log-log points).
    """
    sizes = np.asarray(sizes, dtype=float)
    values = np.asarray(values, dtype=float)
    if sizes.ndim != 1 or values.shape != sizes.shape:
        raise ValueError(
            f"sizes and values must be 1-D of equal shape, got sizes "
            f"{sizes.shape} and values {values.shape}"
        )
    if not 2 <= last <= sizes.size:
        raise ValueError(f"last must be between 2 and len(sizes) = {sizes.size}, got {last}")
    if np.any(sizes[-last:] <= 0) or np.any(values[-last:] <= 0):
        raise ValueError("sizes and values must be positive for a log-log slope")
    return float(np.polyfit(np.log(sizes[-last:]), np.log(values[-last:]), 1)[0])

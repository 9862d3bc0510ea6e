"""Small, honest timings for the live measurements in the book."""

from __future__ import annotations

import statistics
import time

from ._checks import check_callable


def median_time(fn, repeat: int = 5, number: int = 1, warmup: int = 1) -> float:
    """Median wall time in seconds of ``number`` calls of ``fn()``, over ``repeat`` runs.

    ``warmup`` calls run first and are not timed (tracing, caches).  The median
    resists the odd slow run that a shared machine produces.
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
    return statistics.median(runs)


def format_bytes(n: float) -> str:
    """Binary-prefixed size: ``format_bytes(2**28) == '256 MiB'``."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if float(n).is_integer() else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover

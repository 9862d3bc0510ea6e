"""Time a cold build and a no-change rebuild of both editions (run by `make bench`).

Cold: the HTML, the execution cache and Sphinx's saved environment are
removed first, so every page runs (MathJax assets and .venv stay).
Rebuild: nothing changed, so `make book` finds the digests of its inputs
unchanged and stops; the median of five is reported.  Afterwards the
per-page execution times recorded by jupyter-cache are printed.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed_build() -> float:
    """Time `make book`, the command a reader runs (parallel execution included)."""
    start = time.perf_counter()
    subprocess.run(["make", "book"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    # Cold: no HTML, no execution cache, and no saved Sphinx environment (with
    # it, Sphinx would skip unchanged pages and nothing would be executed).
    build = ROOT / "_build"
    for name in ("html", ".jupyter_cache", "jupyter_execute", ".doctrees", "zh_CN"):
        shutil.rmtree(build / name, ignore_errors=True)
    for stamp in (".book-succeeded", ".site-code"):
        (build / stamp).unlink(missing_ok=True)
    cold = timed_build()
    warm = [timed_build() for _ in range(5)]
    print(f"cold build (cache cleared):            {cold:6.2f} s")
    print(f"no-change rebuild (median of 5):       {statistics.median(warm):6.2f} s")

    from jupyter_cache import get_cache

    cache = get_cache(ROOT / "_build" / ".jupyter_cache")
    rows = []
    for record in cache.list_cache_records():
        data = record.data or {}
        rows.append((data.get("execution_seconds", float("nan")), Path(record.uri).name))
    print("\nper-page execution (jupyter-cache; pages run two at a time, so the")
    print("total is more than the cold build spent executing):")
    for seconds, name in sorted(rows, reverse=True):
        print(f"  {seconds:6.2f} s  {name}")
    print(f"  {sum(s for s, _ in rows):6.2f} s  total")


if __name__ == "__main__":
    main()

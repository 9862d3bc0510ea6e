"""Time a cold build and a no-change rebuild of the book (run by `make bench`).

Cold: the execution cache and the HTML are removed first, so every page runs.
Rebuild: nothing changed, so jupyter-cache serves every page.  Afterwards the
per-page execution times recorded by jupyter-cache are printed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JB = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "-W", "-n", "--keep-going"]


def timed_build() -> float:
    start = time.perf_counter()
    subprocess.run(JB, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    for path in (ROOT / "_build" / "html", ROOT / "_build" / ".jupyter_cache", ROOT / "_build" / "jupyter_execute"):
        shutil.rmtree(path, ignore_errors=True)
    cold = timed_build()
    warm = timed_build()
    print(f"cold build (cache cleared): {cold:6.1f} s")
    print(f"no-change rebuild:          {warm:6.1f} s")

    from jupyter_cache import get_cache

    cache = get_cache(ROOT / "_build" / ".jupyter_cache")
    rows = []
    for record in cache.list_cache_records():
        data = record.data or {}
        rows.append((data.get("execution_seconds", float("nan")), Path(record.uri).name))
    print("\nper-page execution (jupyter-cache):")
    for seconds, name in sorted(rows, reverse=True):
        print(f"  {seconds:6.2f} s  {name}")
    print(f"  {sum(s for s, _ in rows):6.2f} s  total")


if __name__ == "__main__":
    main()

"""Time `make pdf` once, printing both editions (run by `make bench`).

`--force` makes it print even when nothing changed since the last `make
pdf`: Sphinx's singlehtml builds of both editions (incremental: only what
the site changed), then Chromium's prints, two or more per edition, and
pypdf's bookmarks (bookbuild/pdf.py). The site must be built (`make bench`
runs `make book` first). Its own lines say how many prints each edition
took and how long each edition's printing took (both editions at once).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bookbuild.pdf", "--force"], cwd=ROOT, check=True)
    print(f"make pdf (both editions, forced):      {time.perf_counter() - start:6.2f} s")


if __name__ == "__main__":
    main()

"""Execute the book's pages in parallel into jupyter-cache, before the build.

Jupyter Book 1 executes pages one after another while Sphinx reads them, so a
cold build uses one core. This helper (run by `make book`, bookbuild/pipeline.py) executes the pages
that are not cached yet, one per core, and stores them in the same cache that
myst-nb reads, keyed the same way (the code cells and the kernelspec, read
with myst-nb's own reader). The build then finds every page cached.

Pages run side by side, so each kernel gets one BLAS thread: with two
kernels each running a multi-threaded BLAS on two cores, the threads wait on
each other and the timing pages would measure that contention.

It prints one line per executed page (page, seconds). Nothing here can hide
a failure: a page that fails is not cached, its failing cell's report
(source and traceback) is printed and the helper exits non-zero, so `make
book` stops there and the next build runs the page again. A page whose key
did not match would simply be executed again by jupyter-book.

Each kernel is forked from one process that imported TensorFlow, SymPy and
matplotlib once (``bookbuild/kernel_zygote.py``): importing TensorFlow in every
kernel was half the CPU time of a cold build. ``MATGRAD_ZYGOTE_OFF=1``
starts ordinary kernels instead.

Kernels talk to this process over Unix sockets in a private temporary folder
(``kernel_config``), not over TCP on localhost: nothing listens on a port,
and ipykernel has no reason to warn that its traffic is unencrypted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml
from jupyter_cache import get_cache
from jupyter_cache.cache.main import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from myst_nb.core.read import read_myst_markdown_notebook

from bookbuild.pages import BUILD, ROOT, book_pages, stamp, toc_pages  # noqa: F401 (the tests' helper)

CACHE = BUILD / ".jupyter_cache"
# Started first: the pages that took longest on a two-core machine (a cold
# build on 2026-11-27: oneDNN's page starts three TensorFlow processes; 05
# traces and records many functions; frameworks and the second-derivative
# costs page compare with JAX; 05b times things). With two pages at a time, a
# long page started last would run alone at the end; longest first, the last
# to finish is a short one. Only the order changes; a name missing from
# _toc.yml fails tests/test_bookbuild.py.
SLOW_FIRST = (
    "appendix/onednn.md",
    "appendix/kernel_differences.md",
    "chapters/05_full_jacobians.md",
    "further/frameworks.md",
    "further/second_derivative_costs.md",
    "further/hessian_costs.md",
    "chapters/05b_jacobian_costs.md",
    "further/wirtinger.md",
    "chapters/04_vjp.md",
    "further/per_example_gradients.md",
    "further/second_derivatives.md",
)


def in_execution_order(pages: list[Path]) -> list[Path]:
    """``pages``, the slow ones (SLOW_FIRST) first, the rest in _toc.yml order."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    return sorted(pages, key=lambda p: rank.get(p.relative_to(ROOT).as_posix(), len(rank)))


def read(path: Path):
    return read_myst_markdown_notebook(path.read_text("utf8"), path=str(path))


# jupyter-cache keys a page by its own code cells, but three pages' code reads
# other files of the book: the exercise list and the tolerances page's check of
# the book's tolerances read every page, the references page reads the pins. Such a page
# (its code names ``Path("..", ...)``) stores the digest of the files it may
# read with its cache record and runs again when that digest changes: the
# exercise list once kept listing exercises that a split page had moved.
READS_THE_BOOK = re.compile(r"""Path\(\s*["']\.\.""")


def reads_the_book(nb) -> bool:
    return any(cell.cell_type == "code" and READS_THE_BOOK.search(cell.source) for cell in nb.cells)


def book_digest() -> str:
    """The digest of the files a page that reads the book may read."""
    import hashlib

    names = sorted({*toc_pages(), *ROOT.glob("*/*.md"), Path("_toc.yml"), Path("constraints.txt")})
    h = hashlib.sha256()
    for name in names:
        path = name if name.is_absolute() else ROOT / name
        if path.is_file():
            h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def cached(cache, page: Path, digest: str) -> bool:
    """Whether ``page`` has a usable record in the cache."""
    nb = read(page)
    try:
        record = cache.match_cache_notebook(nb)
    except KeyError:
        return False
    return not reads_the_book(nb) or (record.data or {}).get("book_digest") == digest


@contextlib.contextmanager
def kernel_config():
    """nbclient configuration for one kernel: IPC transport in a private folder.

    The socket paths are absolute (the kernel runs in the page's folder, this
    process elsewhere) and the folder is removed afterwards.
    """
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="matgrad-kernel-") as folder:
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "ipc")}})


def no_colours(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def join_stream_pieces(nb) -> None:
    """Join consecutive pieces of one stream in each cell's outputs, in place.

    The kernel sends what a cell prints whenever its flush timer fires, so
    ``print("shape:", x.shape)`` arrives in one piece or in two, depending
    on how busy the machine is; myst-nb would show two pieces as two boxes.
    Joined, the page shows what was printed, whatever the timing. (MyST-NB's
    ``nb_merge_streams`` strips each piece's trailing spaces and adds a line
    break, which would put "shape:" and its value on two lines.)
    """
    for cell in nb.cells:
        joined = []
        for out in cell.get("outputs", []):
            prev = joined[-1] if joined else None
            if (
                prev is not None
                and out.get("output_type") == "stream" == prev.get("output_type")
                and out.get("name") == prev.get("name")
            ):
                prev["text"] += out["text"]
            else:
                joined.append(out)
        if "outputs" in cell:
            cell["outputs"] = joined


def execute(path_str: str, timeout: int):
    """Run one page in a fresh kernel in its own folder (as myst-nb does)."""
    path = Path(path_str)
    nb = read(path)
    with kernel_config() as config:
        result = single_nb_execution(
            nb,
            cwd=str(path.parent),
            timeout=timeout,
            # nbclient gives a kernel 60 s to answer; on a machine busy with
            # other builds a page failed that way ("Kernel didn't respond in
            # 60 seconds"). A page must not fail because the machine is busy.
            startup_timeout=600,
            allow_errors=False,
            meta_override=True,
            config=config,
        )
    if result.err is None:
        join_stream_pieces(nb)
        return path_str, nb, result.time, None
    # A failing cell's error names the cell and its traceback; nbclient's own
    # stack above it says nothing about the page.
    from nbclient.exceptions import CellExecutionError

    text = (
        str(result.err)
        if isinstance(result.err, CellExecutionError)
        else result.exc_string or repr(result.err)
    )
    return path_str, None, result.time, no_colours(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    timeout = int(config.get("execute", {}).get("timeout", 120))

    # One BLAS thread per kernel (kernels inherit this environment).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    cache = get_cache(CACHE)
    digest = book_digest()
    todo = [page for page in book_pages() if not cached(cache, page, digest)]
    if not todo:
        return 0
    print(f"executing {len(todo)} page(s), {args.jobs} at a time", flush=True)
    start = time.perf_counter()
    failed = []
    zygote = contextlib.nullcontext()
    # (`make book` starts the zygote before it imports this module: MATGRAD_ZYGOTE is set)
    if os.environ.get("MATGRAD_ZYGOTE_OFF") != "1" and not os.environ.get("MATGRAD_ZYGOTE"):
        from bookbuild.kernel_zygote import Zygote  # kernels forked after one import of TF

        zygote = Zygote()
    with zygote, ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(execute, str(p), timeout) for p in in_execution_order(todo)]
        for future in as_completed(futures):
            path, nb, seconds, error = future.result()
            name = Path(path).relative_to(ROOT)
            if error:
                print(f"  {name}: FAILED after {seconds:.1f} s", flush=True)
                failed.append((name, error))
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nb, path, data={"execution_seconds": seconds, "book_digest": digest}),
                check_validity=False,
                overwrite=True,
            )
            # A page that reads the book runs again when another page changes,
            # its own source unchanged: its stamp tells Sphinx to read it again.
            touched = stamp(name)
            touched.parent.mkdir(parents=True, exist_ok=True)
            touched.touch()
            print(f"  {name}: {seconds:.1f} s", flush=True)
    print(f"executed in {time.perf_counter() - start:.1f} s", flush=True)
    for name, error in failed:
        print(f"\n===== {name}: the failing cell and its error\n{error.strip()}", flush=True)
    if failed:
        names = ", ".join(str(n) for n, _ in failed)
        print(f"\nmake book: {len(failed)} page(s) failed to execute: {names}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers for the tests: the book's pages, the built site, Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bookbuild import chromium, local_server

# One reader of _toc.yml for the build and the tests (bookbuild/pages.py).
from bookbuild.pages import TRANSLATIONS, site_pages, source_page, toc_pages  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() == "true"

# TensorFlow log lines, Python warnings and tracebacks that must never reach a
# page (checked in the executed notebooks and in the rendered site).
LOG_NOISE = (
    "I0000 ",
    "W0000 ",
    "E0000 ",
    "oneDNN custom operations",
    "WARNING:tensorflow",
    "Warning:",
    "warnings.warn",
    "Traceback (most recent call last)",
)


def build_helper():
    """The build's own helper module, bookbuild/execute_pages.py (the pages it
    executes, its kernels' configuration, its reader of the pages)."""
    from bookbuild import execute_pages

    return execute_pages


def require_or_skip(reason: str):
    """Skip with ``reason`` outside CI; in CI (CI=true) a missing piece is a failure."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true, so this is required)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def built_site() -> Path:
    if not (HTML / "index.html").exists():
        require_or_skip("the built site is missing: run 'make book' (or 'make test') first")
    return HTML


def chromium_path() -> str | None:
    return chromium.path()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (skipped outside CI when absent)."""
    exe = chromium_path()
    if exe is None:
        require_or_skip(
            "Chromium is not installed (Debian: apt-get install chromium); "
            "the browser checks were not run"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - it is in requirements-dev.txt
        require_or_skip("the playwright package is not installed")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=chromium.FLAGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server(built_site):
    """The built site over HTTP on 127.0.0.1 (a free port), as a reader's browser sees it."""
    with local_server.serving(built_site) as url:
        yield url


def lab_urlpath(page: Path) -> str:
    """The JupyterLab path a page's launch button opens (on Binder or locally)."""
    return f"lab/tree/{page.as_posix()}"


def page_url(server: str, page: Path) -> str:
    return f"{server}/{page.with_suffix('.html').as_posix()}"


# ---- executing a page in its notebook form (test_pages, test_load) ----------


def _failing_cell(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return index, cell
    return None, None


def execute_page(
    page: Path, workdir: Path, env: dict | None = None, timeout: int = 180, runs: int = 1
):
    """Run ``page`` (MyST) as a notebook from a clean kernel in the page's folder.

    The page goes through jupytext to a real .ipynb and back, as a reader's
    download would. With ``runs=2`` every cell runs again, in order, in the
    same kernel, as a reader's second Run All does. A failing cell fails the
    test with its source and error; a cell (not tagged raises-exception) that
    writes to stderr or prints log noise fails it too. Returns the executed
    notebook of each run.
    """
    import copy

    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    helper = build_helper()
    nb = jupytext.read(ROOT / page, fmt="md:myst")
    ipynb = workdir / page.with_suffix(".ipynb").name
    jupytext.write(nb, ipynb)
    nb = nbformat.read(ipynb, as_version=4)
    done = []
    try:
        with helper.kernel_config() as config:  # the build's kernels: quiet IPC, no TCP
            client = NotebookClient(
                nb,
                timeout=timeout,
                kernel_name="python3",
                config=config,
                resources={"metadata": {"path": str((ROOT / page).parent)}},
            )
            kernel_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}
            with client.setup_kernel(env=kernel_env):
                for _ in range(runs):
                    for index, cell in enumerate(nb.cells):
                        client.execute_cell(cell, index)
                    done.append(copy.deepcopy(nb))
    except CellExecutionError as exc:  # its text has the cell's source and traceback
        index, _ = _failing_cell(nb)
        which = f" in run {len(done) + 1} of {runs}" if runs > 1 else ""
        pytest.fail(
            f"{page}: cell {index} failed{which}\n{helper.no_colours(str(exc))}", pytrace=False
        )
    for ran in done:
        for index, cell in enumerate(ran.cells):
            if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
                continue
            for out in cell.get("outputs", []):
                text = out.get("text", "") or str(out.get("data", {}).get("text/plain", ""))
                assert out.get("name") != "stderr", f"{page}: cell {index} wrote to stderr:\n{text}"
                for word in LOG_NOISE:
                    assert word not in text, f"{page}: cell {index} printed {word!r}:\n{text}"
    return done if runs > 1 else done[0]


# ---- the build's kernels, and what they produce ------------------------------


@pytest.fixture(scope="session")
def zygote_env():
    """The environment that makes nbclient start kernels forked from a zygote
    (bookbuild/kernel_zygote.py, as the build does); the zygote lives for the session."""
    from bookbuild.kernel_zygote import Zygote

    with Zygote() as zygote:
        env = {key: os.environ[key] for key in zygote.saved}
        for key, value in zygote.saved.items():  # only tests that ask for it use it
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield env


def output_kinds(nb) -> list[list[tuple]]:
    """Per code cell, the kinds of its outputs. A stream may arrive in one piece
    or several (it depends on when it was flushed), so consecutive pieces of
    one stream count once."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kinds = []
        for out in cell.get("outputs", []):
            kind = (out["output_type"], out.get("name"), tuple(sorted(out.get("data", {}))))
            if not (kinds and kind[0] == "stream" and kinds[-1] == kind):
                kinds.append(kind)
        cells.append(kinds)
    return cells


def built_notebook(page: Path):
    """The notebook the build executed for ``page``, or None (not built, or stale)."""
    from jupyter_cache import get_cache

    helper = build_helper()
    if not (helper.CACHE / "global.db").exists():
        return None
    cache = get_cache(helper.CACHE)
    try:
        record = cache.match_cache_notebook(helper.read(ROOT / page))
    except KeyError:
        return None
    return cache.get_cache_bundle(record.pk).nb


def assert_same_output_kinds_as_the_build(page: Path, nb) -> None:
    built = built_notebook(page)
    if built is not None:
        assert output_kinds(built) == output_kinds(nb), (
            f"{page}: the build's run and this run made different kinds of output"
        )


# The longest tests first: with two workers, a long test that starts last
# (the Binder-like venv build of test_lab takes a minute or two on a new
# machine; test_load runs pages on a saturated machine) is the whole tail.
_LONG_FIRST = ("test_lab.py", "test_load.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = item.path.name
        return _LONG_FIRST.index(name) if name in _LONG_FIRST else len(_LONG_FIRST)

    items.sort(key=rank)  # a stable sort: the order within each group is kept


@pytest.fixture
def shown(monkeypatch) -> list:
    """What IPython.display.display was given, as (data, metadata) pairs,
    instead of displaying it (matgrad.plotting.show, matgrad.tables)."""
    import IPython.display

    found = []
    monkeypatch.setattr(
        IPython.display,
        "display",
        lambda data, metadata=None, raw=False: found.append((data, metadata)),
    )
    return found

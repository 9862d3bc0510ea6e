"""Shared helpers for the tests: the book's pages, the built site, Chromium."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bookbuild import chromium, local_server

# One reader of _toc.yml for the build and the tests (bookbuild/pages.py).
from bookbuild.pages import TRANSLATIONS, site_pages, source_page, toc_pages  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# TensorFlow in the test processes runs as on the book's pages: oneDNN's custom
# operations off (a page's first cell sets this before it imports TensorFlow,
# which reads it once). Set here, before any test module imports TensorFlow,
# so that no test depends on which module was collected first.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

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


# ---- executing a page in its notebook form (test_pages, test_portability) ---


def _failing_cell(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return index, cell
    return None, None


def _run_outside_the_page(client, nb, code: str | None) -> str:
    """Run ``code`` in the page's kernel as a cell that is not the page's
    (inserted first for its run, then removed); what it printed."""
    import nbformat

    if not code:
        return ""
    cell = nbformat.v4.new_code_cell(code)
    nb.cells.insert(0, cell)
    try:
        client.execute_cell(cell, 0)
    finally:
        nb.cells.pop(0)
    return "".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stdout")


def execute_page(
    page: Path,
    workdir: Path,
    env: dict | None = None,
    timeout: int = 180,
    runs: int = 1,
    after_run=None,
    before_run: dict[int, str] | None = None,
):
    """Run ``page`` (MyST) as a notebook from a clean kernel in the page's folder.

    The page goes through jupytext to a real .ipynb and back, as a reader's
    download would. With ``runs=2`` every cell runs again, in order, in the
    same kernel, as a reader's second Run All does, and in that second run
    each code cell runs twice in a row, as when a reader runs a cell again
    (a cell must not depend on state that its own first run changed, such as
    a random generator shared with earlier cells); ``after_run(number, text)``,
    if given, is called after each run with what ``before_run[number]`` (code
    run in the kernel just before that run, not part of the page) printed.
    A failing cell fails the test with its source and error; a cell (not
    tagged raises-exception) that writes to stderr or prints log noise fails
    it too. Returns the executed notebook of each run.
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
                for number in range(runs):
                    printed = _run_outside_the_page(client, nb, (before_run or {}).get(number))
                    for index, cell in enumerate(nb.cells):
                        again = number > 0 and cell.cell_type == "code"
                        for _ in range(2 if again else 1):
                            client.execute_cell(cell, index)
                    done.append(copy.deepcopy(nb))
                    if after_run is not None:
                        after_run(number, printed)
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


# ---- clocks as a busy machine shows them (test_pages runs the timing pages with them) ----

# A page reads a clock when its code times something: matgrad.timing's timers,
# timeit, or the time module's clocks. tests/test_load.py says what the noisy
# clocks check.
TIMERS = re.compile(
    r"\b(best_time|median_time|measure|timeit\.\w+|time\.(perf_counter|thread_time|process_time))\("
)
CLOCKS = ("perf_counter", "thread_time", "process_time")
# Run in the kernel before a timing page's first run: each of the time
# module's clocks then adds, at every reading, up to 20 times the interval
# since its last reading, and now and then a pause of 50 ms (another program
# on the same cores, a page fault, a busy disk). Seeded: a failure repeats.
NOISY_CLOCKS = f"""
import random as _random, time as _time
def _noisy_clock(real, rng):
    state = {{"extra": 0.0, "last": real(), "readings": 0}}
    def clock():
        now = real()
        state["extra"] += (now - state["last"]) * rng.uniform(0, 20)
        state["extra"] += 0.05 if rng.random() < 0.1 else 0.0
        state["last"], state["readings"] = now, state["readings"] + 1
        return now + state["extra"]
    clock.real, clock.state = real, state
    return clock
for _seed, _name in enumerate({CLOCKS!r}):
    setattr(_time, _name, _noisy_clock(getattr(_time, _name), _random.Random(_seed)))
"""
# Run before the second run: the real clocks back, and how often the page read
# the noisy ones (printed as "name readings" lines).
REAL_CLOCKS = f"""
for _name in {CLOCKS!r}:
    _clock = getattr(_time, _name)
    print(_name, _clock.state["readings"])
    setattr(_time, _name, _clock.real)
"""


def timed_pages() -> list[Path]:
    """The pages whose code reads a clock (found by searching the pages, so a
    new one is picked up)."""
    return [p for p in toc_pages() if TIMERS.search((ROOT / p).read_text())]


# ---- the order of the tests, and what the workers report --------------------

# The longest tests first: with two workers, a long test that starts last is
# the whole tail. pytest-xdist hands them out in this order, one at a time to
# whichever worker is free (--maxschedchunk=1 in pyproject.toml), so the long
# tests spread over both workers. Measured in CI:
# the Binder-like venv of test_lab (a minute or two on a new machine), the
# kernel variants of test_portability (eight pages, each run twice, and a
# Chinese build), the timing pages,
# the tests that start TensorFlow children or compile JAX for many shapes,
# the pages run twice, then the browser checks of every page.
_LONG_FIRST = (
    "test_lab.py::test_page_runs",
    "test_portability.py::test_kernel_pages_pass_with_other_kernels",
    "test_floats.py::test_the_onednn_page",
    "test_pages.py::test_page_executes_twice[chapters/05b",
    "test_pages.py::test_page_executes_twice[chapters/03",
    "test_floats.py::test_onednn_runs",
    "test_portability.py::test_variants_take_effect",
    "test_examples.py::test_seed_gradient_in_subprocess",
    "test_floats.py::test_onednn",
    "test_linalg_grads.py::test_rules_match_jax_pullbacks",
    "test_jax.py::test_matmul_grad_matches_jax_vjp",
    "test_build.py::test_forked_kernels",
    "test_pages.py",
    "test_site.py",
)


def pytest_collection_modifyitems(config, items):
    def rank(item):
        nodeid = item.nodeid.removeprefix("tests/")
        for number, prefix in enumerate(_LONG_FIRST):
            if nodeid.startswith(prefix):
                return number
        return len(_LONG_FIRST)

    items.sort(key=rank)  # a stable sort: the order within each group is kept


def pytest_sessionfinish(session):
    """axe-core's minor findings (tests/test_a11y.py): a worker hands its
    own to the controller, which writes them all to _build/a11y.json."""
    import test_a11y

    if hasattr(session.config, "workeroutput"):  # an xdist worker
        session.config.workeroutput["a11y"] = json.dumps(test_a11y.RESULTS)
        return
    results = {**test_a11y.RESULTS, **_A11Y_FROM_WORKERS}
    if results:
        test_a11y.REPORT.parent.mkdir(parents=True, exist_ok=True)
        test_a11y.REPORT.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


_A11Y_FROM_WORKERS: dict = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _A11Y_FROM_WORKERS.update(json.loads(getattr(node, "workeroutput", {}).get("a11y", "{}")))


def pytest_terminal_summary(terminalreporter):
    import test_a11y

    results = {**test_a11y.RESULTS, **_A11Y_FROM_WORKERS}
    minor = sum(
        rule["count"]
        for views in results.values()
        for view in views.values()
        for rule in view.values()
    )
    if results:
        terminalreporter.write_line(
            f"axe-core: {minor} minor findings (below serious) on {len(results)} pages, "
            f"by page, view and rule in {test_a11y.REPORT.relative_to(ROOT)}"
        )


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

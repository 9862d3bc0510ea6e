"""The chapters as a reader runs them on Binder: in JupyterLab, in Chromium.

The environment is built the way Binder builds it (``binder_env``: a fresh
venv from binder/requirements.txt alone, then binder/postBuild), JupyterLab
is started from it on 127.0.0.1 (a free port, a token, ``--allow-root`` for
root), and Chromium opens the URL of a page's launch button. The test checks
that the page opens as a notebook (the Jupytext Notebook viewer, not the
Markdown editor), that no "Jupyter news" prompt shows, that its MyST renders
(jupyterlab-myst: no raw labels, roles or directive options in the text), and
that Run > Run All Cells runs every code cell with no error output.

JupyterLab serves a copy of the repository, so nothing a test does in the
browser (autosave, checkpoints) can touch the pages. By default chapter 04
is opened; MATGRAD_LAB_ALL=1 opens every page of the book.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import jupytext
import pytest

from binder_env import binder_env
from conftest import ROOT, chromium_path, lab_urlpath, require_or_skip, toc_pages

SHOTS = ROOT / "_build" / "screenshots"
DEFAULT = Path("chapters/04_vjp.md")
PAGES = toc_pages() if os.environ.get("MATGRAD_LAB_ALL") == "1" else [DEFAULT]
RUN_TIMEOUT = 240  # seconds for Run All Cells on one page

# MyST source forms that must not survive rendering (outside code and math).
# Not anchored to line starts: a cell's textContent runs its paragraphs together.
RAW_MYST = {
    "label": re.compile(r"\([\w-]+\)="),
    "role": re.compile(r"\{[a-z][\w:-]*\}`"),
    "directive": re.compile(r"```\{|:::\{"),
    "directive option": re.compile(r"(?<![\w:]):(class|label|tags|name|alt|width):\s"),
}

# Text of every markdown cell's rendered form, without code, math or editors
# (rendered math such as "tr(G^H T dB) =" would otherwise look like a label).
MARKDOWN_JS = """() => Array.from(document.querySelectorAll('.jp-MarkdownCell')).map(cell => {
  const copy = cell.cloneNode(true);
  copy.querySelectorAll('.jp-InputArea-editor, .cm-editor, .jp-InputPrompt, pre, code,'
                        + ' annotation, .katex, .math, mjx-container, script, style')
    .forEach(e => e.remove());
  return copy.textContent;
})"""
# Per code cell, in order: its prompt and whether it shows an error or stderr.
CELLS_JS = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell')).map(c => ({
  prompt: (c.querySelector('.jp-InputPrompt') || {}).textContent || '',
  error: Array.from(c.querySelectorAll('.jp-OutputArea-output'))
    .filter(o => o.getAttribute('data-mime-type') === 'application/vnd.jupyter.stderr')
    .map(o => o.textContent).join('\\n')
}))"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab from the Binder-like venv, serving a copy of the repository."""
    if chromium_path() is None:
        require_or_skip(
            "Chromium is not installed (Debian: apt-get install chromium); "
            "the JupyterLab test was not run"
        )
    env_dir = binder_env()
    tmp = tmp_path_factory.mktemp("lab")
    repo = tmp / "repo"
    shutil.copytree(
        ROOT,
        repo,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "_build", "node_modules", "__pycache__", ".pytest_cache"
        ),
    )
    env = {**os.environ, "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    # Nothing from this machine's Jupyter set-up: user config, kernels, settings.
    for var in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR",
    ):
        env[var] = str(tmp / var.lower())
    # All cells in the page, not only those in view: JupyterLab 4 renders a
    # long notebook in windows (cells far from the view are not drawn), and
    # the test reads every cell. A reader's JupyterLab keeps its default.
    tracker = tmp / "jupyterlab_settings_dir" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        str(env_dir / "bin" / "jupyter"),
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={repo}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log_path = tmp / "jupyterlab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(0.5)
        yield base, token, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()


def _shut_down_kernels(base: str, token: str) -> None:
    """Stop the page's kernel (each page's kernel would hold its memory until
    the server stops; MATGRAD_LAB_ALL=1 opens every page)."""
    sessions = json.load(urllib.request.urlopen(f"{base}/api/sessions?token={token}"))
    for session in sessions:
        request = urllib.request.Request(
            f"{base}/api/sessions/{session['id']}?token={token}", method="DELETE"
        )
        urllib.request.urlopen(request, timeout=30)


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_page_runs_as_a_notebook_in_jupyterlab(page, lab, browser):
    base, token, log_path = lab
    source = jupytext.read(ROOT / page, fmt="md:myst")
    markdown = [c for c in source.cells if c.cell_type == "markdown"]
    code = [c for c in source.cells if c.cell_type == "code"]
    may_fail = {i for i, c in enumerate(code) if "raises-exception" in c.metadata.get("tags", [])}

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    start = time.perf_counter()
    # ?reset: a fresh workspace, not the one the last page left (JupyterLab
    # would open that page again, beside this one).
    tab.goto(f"{base}/{lab_urlpath(page)}?reset&token={token}")
    # Opened by the Jupytext Notebook viewer: a notebook panel, no file editor.
    tab.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
    assert tab.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").count() == 1
    assert tab.locator(".jp-FileEditor:not(.lm-mod-hidden)").count() == 0, (
        f"{page} opened in the text editor, not as a notebook"
    )
    tab.wait_for_function("() => document.body.innerText.includes('| Idle')", timeout=120_000)

    # Run > Run All Cells, as a reader would.
    tab.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    tab.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    deadline = time.monotonic() + RUN_TIMEOUT
    while True:
        cells = tab.evaluate(CELLS_JS)
        errors = {i: c["error"] for i, c in enumerate(cells) if c["error"] and i not in may_fail}
        done = all(re.fullmatch(r"\[\d+\]:", c["prompt"].strip()) for c in cells)
        if errors or done or time.monotonic() > deadline:
            break
        time.sleep(1)
    seconds = time.perf_counter() - start
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"lab-{page.stem}.png"))
    assert not errors, f"{page}: error output in JupyterLab:\n" + "\n---\n".join(
        f"code cell {i}:\n{text[-2000:]}" for i, text in errors.items()
    )
    assert len(cells) == len(code), (
        f"{page}: {len(cells)} code cells shown, {len(code)} in the page"
    )
    assert done, f"{page}: not every cell ran within {RUN_TIMEOUT} s: " + str(
        [c["prompt"] for c in cells]
    )

    # The MyST is rendered: every markdown cell, and no source form in its text.
    texts = tab.evaluate(MARKDOWN_JS)
    assert len(texts) == len(markdown)
    for kind, pattern in RAW_MYST.items():
        raw = [m.group(0) for text in texts for m in pattern.finditer(text)]
        assert not raw, f"{page}: raw MyST {kind} in the rendered notebook: {raw[:5]}"
    # No "official Jupyter news" prompt (binder/postBuild's overrides.json).
    assert "Jupyter news" not in tab.evaluate("() => document.body.innerText")
    context.close()
    _shut_down_kernels(base, token)
    print(f"{page}: opened and ran {len(code)} code cells in JupyterLab in {seconds:.1f} s")


def test_raw_myst_patterns_find_the_source_forms():
    """The check above can fail: on the page's source, each pattern finds its form."""
    text = (ROOT / DEFAULT).read_text()
    for kind, pattern in RAW_MYST.items():
        assert pattern.search(text), f"{kind}: {pattern.pattern} finds nothing in {DEFAULT}"

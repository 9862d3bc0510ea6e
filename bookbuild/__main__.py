"""The Makefile's recipes, one command each: ``python -m bookbuild COMMAND``.

    book           execute what changed and build both editions (pipeline.py)
    translations   extract the messages again and merge them into locales/zh_CN
    mathjax        copy MathJax from node_modules to where the site serves it
    vega           copy Vega, Vega-Lite and vega-embed there too (the explorer)
    serve          serve the built site (both editions) at http://127.0.0.1:8000/
    lab            JupyterLab from the venv, the pages opening as notebooks
    bench          the long timings of benchmarks/ (build time, Jacobians,
                   Hessians, make pdf)
    notebooks      every page as an executed notebook, zipped (release.py)
    release-notes  the CHANGELOG section of version TAG (release.py)
    linkcheck      check the external links of both editions
    format         ruff format and ruff check --fix on the Python, and ruff
                   check --fix on the pages' code cells (tests/test_lint.py
                   lists what ruff cannot fix)

(The virtual environment and `make lock` are bookbuild/venv.py, which runs
on the interpreter that makes the venv, before anything is installed.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bookbuild import skip_iri_grammar
from bookbuild.pages import BUILD, ROOT


def book() -> int:
    """`make book`: the decisions of pipeline.py, with the executor and the Sphinx builds."""
    from bookbuild import pipeline

    def execute_pages() -> int:
        # The zygote (bookbuild/kernel_zygote.py) starts importing TensorFlow
        # first, while this process imports jupyter-cache and myst-nb and finds
        # the pages to run (about two seconds it would otherwise wait for);
        # execute_pages.main forks the kernels from it.
        zygote = contextlib.nullcontext()
        if os.environ.get("MATGRAD_ZYGOTE_OFF") != "1":
            from bookbuild.kernel_zygote import Zygote

            zygote = Zygote()
        with zygote:
            from bookbuild import execute_pages

            return execute_pages.main([])

    def start_editions(editions: list[str], reread_all: bool):
        from bookbuild import build_site

        return build_site.Site(editions, reread_all)

    def start_assets() -> subprocess.Popen:
        # `make assets` (npm ci, then MathJax and Vega copied into _build/assets),
        # which only Sphinx needs, runs while the pages execute.
        make = os.environ.get("MAKE", "make")
        return subprocess.Popen([make, "--no-print-directory", "-s", "assets"], cwd=ROOT)

    return pipeline.build(pipeline.Tree(), execute_pages, start_editions, start_assets)


def translations() -> int:
    """`make translations`: after the English changed, extract the messages
    (_build/gettext) and merge them into locales/zh_CN (new messages empty,
    changed ones fuzzy), drop the obsolete entries, then list what needs
    translating (a list of work, not a failure). README.md, "Updating the
    translation"."""
    from bookbuild import build_site, execute_pages

    # A fresh _build/gettext: the .pot of a renamed or removed page would
    # otherwise make sphinx-intl write its catalog again.
    shutil.rmtree(BUILD / "gettext", ignore_errors=True)
    status = execute_pages.main([]) or build_site.main(["--gettext"])
    if status:
        return status
    bin_dir = Path(sys.executable).parent
    merged = subprocess.run(
        [
            bin_dir / "sphinx-intl",
            "update",
            "-p",
            BUILD / "gettext",
            "-l",
            "zh_CN",
            "-d",
            ROOT / "locales",
            "-w",
            "0",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    print(
        "".join(
            line
            for line in merged.stdout.splitlines(keepends=True)
            if not line.startswith("Not Changed")
        ),
        end="",
    )
    if merged.returncode:
        return merged.returncode
    build_site.main(["--drop-obsolete"])
    work = subprocess.run(
        [sys.executable, ROOT / "tests" / "i18n_checks.py"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    print("".join(work.stdout.splitlines(keepends=True)[-40:]), end="")
    return 0


def mathjax() -> int:
    """MathJax 3 from node_modules into _build/assets/mathjax, which Sphinx's
    html_extra_path publishes at <site>/mathjax/ (math renders with no network)."""
    source, target = ROOT / "node_modules" / "mathjax" / "es5", BUILD / "assets" / "mathjax"
    shutil.rmtree(target, ignore_errors=True)
    (target / "output").mkdir(parents=True)
    shutil.copy2(source / "tex-mml-chtml.js", target)
    for name in ("input", "ui", "a11y"):
        shutil.copytree(source / name, target / name)
    shutil.copytree(source / "output" / "chtml", target / "output" / "chtml")
    shutil.copy2(source / "output" / "chtml.js", target / "output")
    return 0


#: The Vega files the Jacobian explorer needs (_ext/vega_explorer.py), by npm package.
VEGA_FILES = {
    "vega": "vega.min.js",
    "vega-lite": "vega-lite.min.js",
    "vega-embed": "vega-embed.min.js",
}


def vega() -> int:
    """Vega, Vega-Lite and vega-embed from node_modules into _build/assets/vega,
    which html_extra_path publishes at <site>/vega/ (the explorer draws with no
    network), with the licence files the packages ship (vega's is in its
    package.json: BSD-3-Clause)."""
    target = BUILD / "assets" / "vega"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for package, name in VEGA_FILES.items():
        source = ROOT / "node_modules" / package
        shutil.copy(source / "build" / name, target)  # (a new mtime: make sees it as made)
        if (source / "LICENSE").exists():
            shutil.copy2(source / "LICENSE", target / f"LICENSE-{package}")
    return 0


def format_code() -> int:
    """ruff's formatting and fixes for the book's Python, and its fixes for the
    pages' code cells (through notebooks, written back into the pages:
    bookbuild/page_code.py)."""
    import tempfile

    from bookbuild import page_code

    for args in (["check", "--fix", "--quiet"], ["format", "--quiet"]):
        page_code.ruff([*args, *page_code.CODE_FOLDERS], ROOT)
    with tempfile.TemporaryDirectory() as folder:
        for page in page_code.fix_pages(Path(folder)):
            print(f"fixed code cells of {page}")
    return 0


def serve() -> int:
    """`make serve`: the built site, each edition at its folder (bookbuild/editions.py)."""
    from bookbuild.editions import EDITIONS
    from bookbuild.local_server import http_server

    html = BUILD / "html"
    where = " and ".join(
        f"http://127.0.0.1:8000/{row.folder + '/' if row.folder else ''} ({row.name})"
        for row in EDITIONS
    )
    print(f"Serving {html.relative_to(ROOT)} at {where}; Ctrl-C stops", flush=True)
    with http_server(html, 8000, quiet=False) as server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


def lab() -> int:
    """`make lab`: binder/postBuild (the script Binder runs: .md pages open as
    notebooks through jupytext), then JupyterLab from this venv."""
    import os

    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", ROOT / "binder" / "postBuild"], cwd=ROOT, env=env, check=True)
    root = ["--allow-root"] if os.geteuid() == 0 else []
    cmd = [bin_dir / "jupyter", "lab", "--ServerApp.ip=127.0.0.1", *root]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def bench() -> int:
    """`make bench`: the benchmarks (long runs that the pages do not make)."""
    for script in ("build_time.py", "jacobians.py", "hessians.py", "pdf_time.py"):
        status = subprocess.run([sys.executable, ROOT / "benchmarks" / script]).returncode
        if status:
            return status
    return 0


def notebooks() -> int:
    """`make notebooks`: every page as an executed notebook, zipped (bookbuild/release.py)."""
    from bookbuild import release

    return release.notebooks()


def release_notes() -> int:
    """`make release-notes TAG=v…`: the tag checked against the version, and its notes."""
    from bookbuild import release

    return release.release_notes(os.environ.get("TAG", ""))


def linkcheck() -> int:
    """`make linkcheck`: Sphinx's linkcheck builder over both editions (needs the network)."""
    from bookbuild import build_site

    return build_site.main(["--linkcheck"])


COMMANDS = {
    "notebooks": notebooks,
    "release-notes": release_notes,
    "linkcheck": linkcheck,
    "serve": serve,
    "lab": lab,
    "bench": bench,
    "book": book,
    "translations": translations,
    "mathjax": mathjax,
    "vega": vega,
    "format": format_code,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    skip_iri_grammar()  # before the build imports jsonschema (see bookbuild/__init__.py)
    return COMMANDS[argv[0]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

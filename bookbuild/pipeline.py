"""`make book`: what changed since the last build, and what must run again.

Work that cannot matter is skipped, by content digests (sha256 of every file,
not modification times), each saved in a stamp file under _build/ when the
step it vouches for succeeded:

- ``EXEC_INPUTS`` decide what runs: when their digest equals the one saved
  after the last pre-execution in which every page passed, nothing needs
  running (the stamp lives in the cache folder, so clearing the cache clears
  it). Otherwise bookbuild/execute_pages.py runs the pages that jupyter-cache
  does not hold yet.
- jupyter-cache re-executes a page only when its own code changes, but every
  page imports matgrad: when ``src/matgrad`` changes, the execution cache
  (and Sphinx's environment) is cleared, so that no page keeps outputs of
  the old code.
- The pages' outputs also depend on what is installed: the Python packages
  (a changed pin) and the CJK fonts the Chinese figures are drawn with. Their
  digest (``environment()``) is saved too; when it differs, the execution
  cache is cleared as for a change of ``src/matgrad``; and matplotlib's own
  cached list of fonts, which it never refreshes, is removed when it lacks a
  CJK font that is on the machine. So a font or a package installed after a
  failed build needs no step by hand.
- ``SITE_INPUTS`` are everything that feeds the site: when their digest
  equals the one saved by the last successful build, the site is up to date.
- Sphinx re-writes a page only when the page (or the configuration) changed;
  a change in ``CODE_INPUTS`` (the book's extensions, static files and build
  code) must reach every page too, so then every page is rebuilt (``--all``;
  executed pages still come from the cache).
- Sphinx re-reads only changed pages, so after a failed build an unchanged
  failing page would be skipped and the next build would pass with the
  page's outputs missing. The success stamp exists only after a successful
  build; without it, Sphinx's saved environment is forgotten and every page
  is re-read (executed ones still come from the cache).

``plan()`` makes these decisions without touching anything (tests/
test_bookbuild.py checks each); ``build()`` carries them out.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from bookbuild import editions, pdf_links, prereqs
from bookbuild.pages import BUILD, ROOT

PACKAGE = ("src/matgrad",)
EXEC_INPUTS = ("index.md", "chapters", "further", "appendix", "_config.yml", "_toc.yml", *PACKAGE)
CODE_INPUTS = ("_ext", "_static", "bookbuild")
SITE_INPUTS = (
    *EXEC_INPUTS,
    *CODE_INPUTS,
    "locales",
    "Makefile",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "constraints.txt",
    "package-lock.json",
)
# Never inputs: caches, and what the build or an editor derives from the sources.
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}
SKIP_SUFFIXES = (".pyc", ".ipynb", ".mo")
# Every edition, always: Sphinx's own incremental build makes an edition with
# nothing to do cheap, and each edition links to every page of the others.
EDITIONS = editions.LANGUAGES


@dataclass(frozen=True)
class Tree:
    """A book's sources (``root``) and its build folder, with the stamps."""

    root: Path = ROOT
    build: Path = BUILD
    # What the environment digest reads: the installed packages (this
    # interpreter's, the venv's) and the folders fonts are found in.
    site_packages: Path = Path(sysconfig.get_paths()["purelib"])
    font_dirs: tuple[Path, ...] = prereqs.FONT_DIRS
    # matplotlib's cache folder (None: matplotlib.get_cachedir(), the kernels').
    font_cache: Path | None = None

    @property
    def html(self) -> Path:
        return self.build / "html"

    @property
    def cache(self) -> Path:
        return self.build / ".jupyter_cache"

    @property
    def package_ok(self) -> Path:
        """Digest of src/matgrad that the execution cache was made with."""
        return self.build / ".matgrad-sources"

    @property
    def environment_ok(self) -> Path:
        """Digests of the packages and fonts that the execution cache was made with."""
        return self.build / ".environment"

    @property
    def exec_ok(self) -> Path:
        """Digest of EXEC_INPUTS after the last pre-execution where every page passed."""
        return self.cache / ".executed-inputs"

    @property
    def code_ok(self) -> Path:
        """Digest of CODE_INPUTS at the last successful build."""
        return self.build / ".site-code"

    @property
    def book_ok(self) -> Path:
        """Digest of SITE_INPUTS; exists only after a successful build."""
        return self.build / ".book-succeeded"

    @property
    def doctrees(self) -> list[Path]:
        return [self.build / e.folder / ".doctrees" for e in editions.EDITIONS]

    @property
    def pdfs(self) -> list[Path]:
        """What `make pdf` made from the last site (bookbuild/pdf.py): a PDF is
        never older than the site that links it, so a new site removes them."""
        return [self.build / "pdf", *self.html.glob("matgrad-*.pdf")]

    @property
    def reports(self) -> list[Path]:
        """Where myst-nb writes the report of a page that failed in Sphinx."""
        return [self.build / e.folder / "html" / "reports" for e in editions.EDITIONS]


def digest(root: Path, inputs: tuple[str, ...]) -> str:
    """sha256 of the list of (sha256, path) of every file under ``inputs``.

    The list is exactly what ``find INPUTS -type f | LC_ALL=C sort | xargs
    sha256sum`` prints (missing inputs are skipped), so a digest can be
    checked by hand.
    """
    files = []
    for name in inputs:
        path = root / name
        if path.is_file():
            files.append(path)
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            files += [Path(folder, n) for n in names if not n.endswith(SKIP_SUFFIXES)]
    names = sorted(p.relative_to(root).as_posix().encode() for p in files)
    lines = (
        hashlib.sha256((root / n.decode()).read_bytes()).hexdigest().encode() + b"  " + n
        for n in names
    )
    return hashlib.sha256(b"".join(line + b"\n" for line in lines)).hexdigest()


def environment(tree: Tree) -> dict[str, str]:
    """Digests of what the pages' outputs depend on beyond their sources: the
    Python and the installed distributions (names and versions), and the CJK
    font files (paths and sizes)."""
    packages = (
        sorted(p.name for p in tree.site_packages.glob("*.dist-info") if p.is_dir())
        if tree.site_packages.is_dir()
        else []
    )
    fonts = [f"{p} {p.stat().st_size}" for p in prereqs.cjk_font_files(tree.font_dirs)]

    def sha(lines: list[str]) -> str:
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()

    return {"packages": sha([sys.version, *packages]), "fonts": sha(fonts)}


def _saved(stamp: Path) -> str | None:
    return stamp.read_text().strip() if stamp.exists() else None


@dataclass(frozen=True)
class Plan:
    """What `make book` will do, and the digests it records when a step succeeds."""

    up_to_date: bool  # nothing changed since the last successful build: stop
    clear_cache: bool  # src/matgrad or the environment changed: execute every page again
    why_clear: str  # what changed, for the one line the build prints
    forget_doctrees: bool  # the last build failed: Sphinx re-reads every page
    reread_all: bool  # extensions/static/build code changed: rewrite every page
    execute: bool  # pages (may) need executing
    editions: tuple[str, ...]
    package: str
    exec_inputs: str
    code: str
    site: str
    environment: dict


def package_changed(tree: Tree, package: str) -> bool:
    """src/matgrad differs from what the execution cache was made with (or no record)."""
    return _saved(tree.package_ok) != package


def nothing_changed(tree: Tree, site: str) -> bool:
    """The last build succeeded, from exactly these inputs, and its site is there."""
    return (tree.html / "index.html").exists() and _saved(tree.book_ok) == site


def last_build_failed(tree: Tree) -> bool:
    """No successful build since the last attempt (or ever)."""
    return not tree.book_ok.exists()


def must_reread_all(tree: Tree, code: str) -> bool:
    """The extensions, static files or build code differ from the last successful build."""
    return _saved(tree.code_ok) != code


def must_execute(tree: Tree, exec_inputs: str, clear_cache: bool) -> bool:
    """A page, the configuration or src/matgrad changed since every page last passed."""
    return clear_cache or _saved(tree.exec_ok) != exec_inputs


def plan(tree: Tree) -> Plan:
    """The decisions for ``tree``'s next build; nothing is changed on disk."""
    digests = {
        name: digest(tree.root, inputs)
        for name, inputs in (
            ("package", PACKAGE),
            ("exec_inputs", EXEC_INPUTS),
            ("code", CODE_INPUTS),
            ("site", SITE_INPUTS),
        )
    }
    env = environment(tree)
    saved_env = json.loads(_saved(tree.environment_ok) or "{}")
    why = (
        "matgrad changed"
        if package_changed(tree, digests["package"])
        else "the installed packages or fonts changed"
        if saved_env != env
        else ""
    )
    return Plan(
        up_to_date=not why and nothing_changed(tree, digests["site"]),
        clear_cache=bool(why),
        why_clear=why,
        environment=env,
        forget_doctrees=last_build_failed(tree),
        reread_all=must_reread_all(tree, digests["code"]),
        execute=must_execute(tree, digests["exec_inputs"], bool(why)),
        editions=EDITIONS,
        **digests,
    )


def _write(stamp: Path, value: str) -> None:
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(value + "\n")


def _remove(*paths: Path) -> None:
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def clear_execution_cache(tree: Tree, steps: Plan) -> None:
    """Forget every executed page and Sphinx's environments; record the digests
    of src/matgrad and of the environment they will be made with."""
    if tree.package_ok.exists():
        print(f"{steps.why_clear}: every page will be executed again")
    translations = [tree.build / folder for folder in editions.TRANSLATIONS]
    _remove(tree.cache, tree.build / "jupyter_execute", tree.build / ".doctrees", *translations)
    _write(tree.package_ok, steps.package)
    _write(tree.environment_ok, json.dumps(steps.environment, sort_keys=True))


def refresh_font_list(tree: Tree) -> bool:
    """Remove matplotlib's cached list of fonts if it lacks a CJK font file that
    is on the machine: matplotlib never refreshes that list by itself, and the
    next import of matplotlib (in the kernels) scans the fonts again. Returns
    whether it removed anything."""
    cache_dir = tree.font_cache
    if cache_dir is None:
        import matplotlib

        cache_dir = Path(matplotlib.get_cachedir())
    on_disk = {str(p) for p in prereqs.cjk_font_files(tree.font_dirs)}
    stale = False
    for cached in cache_dir.glob("fontlist-*.json"):
        try:
            known = {font["fname"] for font in json.loads(cached.read_text())["ttflist"]}
        except (OSError, ValueError, KeyError, TypeError):
            known = set()
        if not on_disk <= known:
            cached.unlink(missing_ok=True)
            stale = True
    return stale


def print_reports(tree: Tree) -> None:
    """The execution reports of pages that failed inside Sphinx."""
    for log in sorted(
        p for folder in tree.reports if folder.is_dir() for p in folder.rglob("*.log")
    ):
        print(f"\n===== execution report: {log}\n{log.read_text()}")


def build(tree: Tree, execute_pages, start_editions, start_assets=None) -> int:
    """Carry out ``plan(tree)``. ``execute_pages()`` runs the pages (it returns
    an exit status). ``start_editions(editions, reread_all)`` starts the Sphinx
    builds, which load while the pages run and wait: it returns an object whose
    ``finish()`` builds them (an exit status) and whose ``cancel()`` ends them
    unbuilt. ``start_assets()``, if given, starts what only Sphinx needs and
    returns a process, run beside the pages and waited for before Sphinx reads."""
    steps = plan(tree)
    if steps.clear_cache:
        refresh_font_list(tree)
        clear_execution_cache(tree, steps)
    if steps.up_to_date:
        print(
            f"make book: nothing changed since the last successful build "
            f"({os.path.relpath(tree.html, tree.root)})"
        )
        return 0
    if steps.forget_doctrees:
        _remove(*tree.doctrees)
    _remove(*tree.reports, *tree.pdfs, tree.book_ok)
    pdf_links.strip(tree.build)  # (links to the PDFs just removed)
    site = start_editions(list(steps.editions), steps.reread_all)
    assets = start_assets() if start_assets else None
    status = execute_pages() if steps.execute else 0
    if steps.execute and not status:
        _write(tree.exec_ok, steps.exec_inputs)
    if assets is not None and assets.wait() and not status:
        print(f"make book: `make assets` failed (exit {assets.returncode})", file=sys.stderr)
        status = assets.returncode
    if status:
        site.cancel()
        return status
    status = site.finish()
    if status:
        print_reports(tree)
        print(f"make book: the build failed (exit {status}); reports above.", file=sys.stderr)
        return status
    _write(tree.book_ok, steps.site)
    _write(tree.code_ok, steps.code)
    return 0

"""Where the book is, and which pages it has: one reader of _toc.yml for the
build and the tests."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from bookbuild import editions

ROOT = Path(__file__).resolve().parents[1]
# MATGRAD_BUILD_DIR moves the build elsewhere (tests/test_portability.py builds
# the Chinese edition from another execution cache there).
BUILD = Path(os.environ.get("MATGRAD_BUILD_DIR") or ROOT / "_build")
# The translations' folders of the site (the table: bookbuild/editions.py).
TRANSLATIONS = editions.TRANSLATIONS
# Each page's stamp, touched whenever the page runs (bookbuild/execute_pages.py):
# a page that runs again because another page changed keeps its source, and
# each edition reads it again because its stamp is newer (_ext/reread_executed.py).
STAMPS = BUILD / "executed"


def stamp(page: Path) -> Path:
    """The stamp of ``page`` (a path relative to the repository root)."""
    return STAMPS / Path(page).with_suffix(".stamp")


def _yaml(name: str):
    import yaml  # not needed when `make book` finds nothing to do

    return yaml.safe_load((ROOT / name).read_text())


def toc_pages() -> list[Path]:
    """Every page named in _toc.yml, as paths relative to the repository root."""
    names: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("root", "file") and isinstance(value, str):
                    names.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(_yaml("_toc.yml"))
    return [Path(n if n.endswith(".md") else n + ".md") for n in names]


def book_pages() -> list[Path]:
    """The pages in _toc.yml that the build executes (not execute.exclude_patterns),
    as absolute paths."""
    skip = _yaml("_config.yml").get("execute", {}).get("exclude_patterns", []) or []
    return [ROOT / p for p in toc_pages() if not any(fnmatch.fnmatch(str(p), pat) for pat in skip)]


def site_pages() -> list[Path]:
    """Every page of every edition, as paths in the built site's terms
    (``chapters/04_vjp.md``, ``zh_CN/chapters/04_vjp.md``)."""
    pages = toc_pages()
    return pages + [Path(lang) / p for lang in TRANSLATIONS for p in pages]


def source_page(page: Path) -> Path:
    """The source page behind a page of any edition."""
    return Path(*page.parts[1:]) if page.parts[0] in TRANSLATIONS else page

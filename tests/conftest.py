"""Shared helpers for the tests: the book's pages, the built site, Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() == "true"


def toc_pages() -> list[Path]:
    """Every page named in _toc.yml, as paths relative to the repository root."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
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

    walk(toc)
    return [Path(n if n.endswith(".md") else n + ".md") for n in names]


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
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None

"""Shared helpers for the tests: the book's pages, the built site, Chromium."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() == "true"

# TensorFlow log lines, Python warnings and tracebacks that must never reach a
# page (checked in the executed notebooks and in the rendered site).
LOG_NOISE = ("I0000 ", "W0000 ", "E0000 ", "oneDNN custom operations", "WARNING:tensorflow",
             "Warning:", "warnings.warn", "Traceback (most recent call last)")


def build_helper():
    """The build's own helper module, _ext/execute_pages.py (one TOC reader for both)."""
    spec = importlib.util.spec_from_file_location("execute_pages", ROOT / "_ext" / "execute_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def toc_pages() -> list[Path]:
    """Every page named in _toc.yml, as paths relative to the repository root."""
    return [p.relative_to(ROOT) for p in build_helper().toc_pages()]


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

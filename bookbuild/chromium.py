"""The Chromium that the browser tests and ``make pdf`` drive (Playwright):
Debian's ``chromium``, found on PATH, and the flags they launch it with."""

from __future__ import annotations

import shutil

# Headless Chromium, possibly as root in a container: no sandbox, no GPU,
# nothing that phones home (the site tests check that no request leaves the
# machine).
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def path() -> str | None:
    """The Chromium executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None

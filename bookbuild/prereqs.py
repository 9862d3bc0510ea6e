"""What `make book` and `make test` need from the machine, checked before any work.

    python3 -m bookbuild.prereqs book|test [--python PATH]

The Makefile runs this first, with whatever Python it found, so it uses the
standard library only and runs on any Python 3.8 or newer. It looks for
everything at once and, when something is missing, prints one message: what
is missing, what it is for, and the one command that installs all of it on
this platform. Then it exits with status 2, before a venv is made or a page
runs. When everything is there it prints nothing and takes well under a
second.

What the book itself installs (the pinned Python packages, MathJax, axe-core)
is not checked here: `make venv` and `npm ci` install it. What is checked is
what a package manager of the system must provide:

- ``book``: a supported CPython that can make a venv, npm (MathJax is
  installed from the npm registry and served by the site), a CJK font for the
  Chinese edition's figures (``matgrad.plotting.CJK_FONTS``), and free disk
  for a first venv.
- ``test``: the same, and Chromium (the site, accessibility and PDF tests
  drive it) and poppler's ``pdftoppm`` (the PDF tests render pages with it).

Why the CJK font is a system package and not a Python one: the font must be
on the machine anyway, for Chromium to set the Chinese PDF and the Chinese
screenshots; a font from PyPI would reach matplotlib only. The packages on
PyPI that bundle one are large (``mplfonts``: an 85 MB wheel, which also
bundles SimHei, a font that is not freely licensed) or little used.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Where fonts live: the folders matplotlib's font manager searches (its
# X11FontDirectories and OSXFontDirectories), which are fontconfig's defaults too.
_HOME = Path.home()
_XDG_DATA = Path(os.environ.get("XDG_DATA_HOME") or _HOME / ".local" / "share")
FONT_DIRS = (
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
    Path("/usr/X11R6/lib/X11/fonts/TTF"),
    Path("/usr/X11/lib/X11/fonts"),
    _XDG_DATA / "fonts",
    _HOME / ".fonts",
    Path("/Library/Fonts"),
    Path("/System/Library/Fonts"),
    Path("/opt/local/share/fonts"),
    _HOME / "Library" / "Fonts",
)
# The files of the families in matgrad.plotting.CJK_FONTS (Noto Sans CJK,
# Source Han Sans, Noto Sans SC, WenQuanYi Zen Hei); tests/test_prereqs.py
# checks that matplotlib names each file found here by one of those families.
CJK_FONT_FILE = re.compile(
    r"^(notosanscjk|sourcehansans|notosanssc|wqy-zenhei).*\.(otf|ttf|ttc)$", re.IGNORECASE
)
# A first venv (TensorFlow, JAX, the book's tools) takes about 3 GB, and
# uv's download cache about as much again.
VENV_BYTES = 6 * 2**30


def cjk_font_files(dirs=FONT_DIRS) -> list[Path]:
    """The font files of a CJK family that the Chinese figures can use, sorted."""
    found = []
    for top in dirs:
        for folder, _, names in os.walk(top):
            found += [Path(folder, n) for n in names if CJK_FONT_FILE.match(n)]
    return sorted(found)


class Need:
    """One prerequisite: what it is for, and the package that brings it on each platform."""

    def __init__(self, what: str, debian: str, macos: str):
        self.what, self.debian, self.macos = what, debian, macos


PYTHON = Need(
    "a Python the book supports (CPython 3.11.2 or newer, 3.12 or 3.13) with its venv module",
    "python3 python3-venv",
    "python@3.12",
)
NPM = Need("npm, to install MathJax, which the site serves itself", "npm", "node")
FONT = Need(
    "a CJK font for the Chinese edition's figures (Noto Sans CJK)",
    "fonts-noto-cjk",
    "--cask font-noto-sans-cjk-sc",
)
CHROMIUM = Need(
    "Chromium, for the site, accessibility and PDF tests", "chromium", "--cask chromium"
)
PDFTOPPM = Need("poppler's pdftoppm, for the PDF tests", "poppler-utils", "poppler")


def python_missing(requested: str | None) -> str | None:
    """Why no Python fits (None if one does): none supported, or no venv module."""
    import importlib.util

    # bookbuild/venv.py, the script `make venv` runs (by path: "venv" is also
    # the standard library's module of that name).
    spec = importlib.util.spec_from_file_location("bookbuild_venv", ROOT / "bookbuild" / "venv.py")
    venv_tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(venv_tool)
    try:
        python, _ = venv_tool.find_python(requested)
    except SystemExit as exc:  # its message lists what it tried, one per line
        tried = [line.strip() for line in str(exc).splitlines() if line.startswith("  ")]
        return "tried " + "; ".join(tried) + "; choose one with PYTHON=/path/to/python3.12"
    probe = subprocess.run(
        [python, "-c", "import ensurepip, venv"], capture_output=True, timeout=30
    )
    if probe.returncode:
        return f"{python} cannot make a venv (its modules venv and ensurepip are missing)"
    return None


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


def missing(
    target: str,
    *,
    python: str | None = None,
    which=shutil.which,
    font_dirs=FONT_DIRS,
    root: Path = ROOT,
    disk=free_bytes,
) -> list[tuple[Need, str]]:
    """What ``target`` (``"book"`` or ``"test"``) needs and this machine lacks,
    as (need, detail) pairs; empty when nothing is missing."""
    if target not in ("book", "test"):
        raise ValueError(f"target must be 'book' or 'test', not {target!r}")
    lacking = []
    if not (root / ".venv" / "bin" / "python").exists():
        why = python_missing(python)
        if why:
            lacking.append((PYTHON, why))
        if disk(root) < VENV_BYTES:
            free = disk(root) / 2**30
            lacking.append(
                (
                    Need("free disk for the venv", "", ""),
                    f"{free:.1f} GB free in {root.name}/, about {VENV_BYTES // 2**30} GB needed",
                )
            )
    if not which("npm"):
        lacking.append((NPM, "npm is not on PATH"))
    if not cjk_font_files(font_dirs):
        lacking.append((FONT, "no Noto Sans CJK, Source Han Sans or WenQuanYi Zen Hei font file"))
    if target == "test":
        if not any(which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
            lacking.append((CHROMIUM, "no chromium on PATH"))
        if not which("pdftoppm"):
            lacking.append((PDFTOPPM, "no pdftoppm on PATH"))
    return lacking


def platform_id(os_release: Path = Path("/etc/os-release")) -> str:
    """``"debian"`` (Debian and its kin), ``"ubuntu"`` (Ubuntu and its kin),
    ``"macos"``, or ``"other"``."""
    if sys.platform == "darwin":
        return "macos"
    try:
        text = os_release.read_text()
    except OSError:
        return "other"
    words = {w for i in re.findall(r"^(?:ID|ID_LIKE)=\"?([^\"\n]+)", text, re.M) for w in i.split()}
    return "ubuntu" if "ubuntu" in words else "debian" if "debian" in words else "other"


def message(target: str, lacking: list[tuple[Need, str]], platform: str) -> str:
    """The one message: what is missing and the command that installs it all."""
    lines = [f"make {target} cannot start; this machine lacks:"]
    lines += [f"  - {need.what} ({detail})" for need, detail in lacking]
    packages = [need for need, _ in lacking if need.debian]
    if packages and platform in ("debian", "ubuntu"):
        names = " ".join(dict.fromkeys(" ".join(n.debian for n in packages).split()))
        if platform == "ubuntu":  # Ubuntu's Chromium is a snap, installed by this name
            names = re.sub(r"\bchromium\b", "chromium-browser", names)
        lines.append(f"Install it all with:\n  sudo apt-get install {names}")
    elif packages and platform == "macos":
        lines.append("Install it with Homebrew:")
        lines += [f"  brew install {need.macos}" for need in packages]
    elif packages:
        lines.append("Install these with your system's package manager.")
    lines.append("Then run the same command again; nothing needs cleaning up.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=("book", "test"))
    parser.add_argument("--python", default=os.environ.get("PYTHON") or None)
    args = parser.parse_args(argv)
    lacking = missing(args.target, python=args.python)
    if lacking:
        print(message(args.target, lacking, platform_id()), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

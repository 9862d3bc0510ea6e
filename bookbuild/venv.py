"""Create the book's virtual environment from the pins, with a Python that fits.

    python3 bookbuild/venv.py [--python PATH] [--venv .venv]

`make book` (and every target that needs the environment) runs this when a
pin changes. It runs on any Python 3 (the standard library only), finds an
interpreter the book supports, creates ``.venv`` with it and installs the
exact set of ``constraints.txt``:

- **Which Python.** The book supports CPython 3.11 from 3.11.2 (Debian 12's),
  3.12 and 3.13; ``constraints.txt`` is one universal resolve with markers
  for all three. ``PYTHON=/path/to/python`` (``make book PYTHON=...``)
  chooses one; otherwise the first of ``python3.11``, ``python3.12``,
  ``python3.13`` and ``python3`` on ``PATH`` that runs and is supported. It
  says what it found and what it needs.
- **Which installer.** pip bootstraps uv, pinned in ``requirements-dev.txt``,
  and uv installs the rest: the same pins, resolved the same way, several
  times faster than pip on a fresh machine (downloads in parallel). uv does
  not read pip's configuration; ``PIP_INDEX_URL``, if set, is passed on.
  Unlike pip, uv does not compile the installed modules to bytecode unless
  asked; it is asked (``--compile-bytecode``), or else the first build
  compiles them in every process it starts, side by side (about 3 s of CPU
  in each Sphinx build alone).
- An existing ``.venv`` made by another Python version is made again.

``--lock`` re-resolves ``constraints.txt`` from ``requirements-dev.txt`` instead
(`make lock`): ``uv pip compile --universal`` for Python 3.11.2 and newer,
preferring the versions already pinned, so one file serves every supported
interpreter and platform, with markers where they differ.
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
CANDIDATES = ("python3.11", "python3.12", "python3.13", "python3")
NEEDS = "CPython 3.11 (3.11.2 or newer), 3.12 or 3.13"
_PROBE = "import platform, sys; print(platform.python_implementation(), *sys.version_info[:3])"


def supported(version: tuple[int, int, int], implementation: str = "CPython") -> bool:
    """Whether the book supports this interpreter (the pins resolve for it)."""
    return implementation == "CPython" and (3, 11, 2) <= tuple(version) < (3, 14, 0)


def probe(python: str) -> tuple[str, tuple[int, int, int]] | None:
    """``(implementation, version)`` of an interpreter, or None if it does not run."""
    try:
        out = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=30, check=True
        ).stdout.split()
        return out[0], (int(out[1]), int(out[2]), int(out[3]))
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None


def find_python(requested: str | None) -> tuple[str, tuple[int, int, int]]:
    """The interpreter to build with: ``requested``, or the first suitable candidate."""
    names = [requested] if requested else list(CANDIDATES)
    seen = []
    for name in names:
        path = shutil.which(name) or (name if os.path.sep in name else None)
        found = probe(path) if path else None
        if found and supported(found[1], found[0]):
            return path, found[1]
        seen.append(
            f"{name}: "
            + (
                "not found"
                if not path
                else "does not run"
                if not found
                else f"{found[0]} {'.'.join(map(str, found[1]))}"
            )
        )
    raise SystemExit(
        f"matgrad needs {NEEDS}; found none that fits:\n  "
        + "\n  ".join(seen)
        + "\nInstall one, or name it: make book PYTHON=/path/to/python3.12"
    )


def venv_version(venv: Path) -> tuple[int, int] | None:
    """The (major, minor) version a venv was made with, from its pyvenv.cfg."""
    cfg = venv / "pyvenv.cfg"
    if not cfg.exists():
        return None
    match = re.search(r"^version(?:_info)?\s*=\s*(\d+)\.(\d+)", cfg.read_text(), re.M)
    return (int(match[1]), int(match[2])) if match else None


def pinned(name: str, constraints: Path) -> str:
    """The exact version ``constraints`` pins for ``name``."""
    for line in constraints.read_text().splitlines():
        if re.match(rf"{re.escape(name)}==", line.strip(), re.I):
            return line.split("==", 1)[1].split(";")[0].strip()
    raise SystemExit(f"{constraints.name} pins no version of {name}")


def run(*cmd, **kwargs) -> None:
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kwargs)


def build(
    python: str,
    version: tuple[int, int, int],
    venv: Path,
    requirements: str = "requirements-dev.txt",
) -> None:
    """Install the pinned set (``requirements`` held to constraints.txt) into
    ``venv``, made with ``python`` (again, if it was made with another
    version), and matgrad itself, editable. uv installs only what differs."""
    constraints = ROOT / "constraints.txt"
    if venv_version(venv) != version[:2] or not (venv / "bin" / "python").exists():
        if venv.exists():
            print(f"matgrad: {venv.name} was made with another Python; making it again")
            shutil.rmtree(venv)
        run(python, "-m", "venv", venv)
    bin_dir = venv / "bin"
    run(
        bin_dir / "python",
        "-m",
        "pip",
        "install",
        "-qq",
        "--disable-pip-version-check",
        f"uv=={pinned('uv', constraints)}",
    )
    env = dict(os.environ)
    if env.get("PIP_INDEX_URL") and not env.get("UV_DEFAULT_INDEX"):
        env["UV_DEFAULT_INDEX"] = env["PIP_INDEX_URL"]
    uv = [bin_dir / "uv", "pip", "install", "--quiet", "--compile-bytecode"]
    uv += ["--python", bin_dir / "python"]
    run(*uv, "-r", requirements, "-c", constraints, env=env)
    run(*uv, "--no-deps", "-e", ".", env=env)


LOCK_HEADER = """\
# The full set that CI, Binder and readers install, resolved from requirements-dev.txt for
# Python 3.11.2 and newer (3.11, 3.12, 3.13) on every platform: a universal resolve with markers
# (uv pip compile --universal), so one file serves each interpreter. Regenerate with 'make lock'.
"""


def lock(venv: Path) -> None:
    """Re-resolve constraints.txt (universal, from 3.11.2), keeping pinned versions
    where possible."""
    constraints = ROOT / "constraints.txt"
    out = ROOT / "_build" / "constraints.resolved.txt"
    out.parent.mkdir(exist_ok=True)
    shutil.copy(constraints, out)  # uv prefers the versions already in its output file
    run(
        venv / "bin" / "uv",
        "pip",
        "compile",
        "--quiet",
        "requirements-dev.txt",
        "--universal",
        "--python-version",
        "3.11.2",
        "--no-header",
        "--no-annotate",
        "-o",
        out,
    )
    body = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    constraints.write_text(LOCK_HEADER + "\n".join(body) + "\n")
    print(f"matgrad: {constraints.name} resolved again ({len(body)} pins)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python",
        default=os.environ.get("PYTHON") or None,
        help="the interpreter to use (default: the first suitable on PATH)",
    )
    parser.add_argument("--venv", default=".venv", help="where to create it (default: .venv)")
    parser.add_argument("--lock", action="store_true", help="re-resolve constraints.txt")
    args = parser.parse_args(argv)
    if args.lock:
        lock((ROOT / args.venv).resolve())
        return 0
    python, version = find_python(args.python)
    venv = (ROOT / args.venv).resolve()
    print(f"matgrad: Python {'.'.join(map(str, version))} ({python}); the book needs {NEEDS}")
    build(python, version, venv)
    (venv / ".matgrad-installed").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The reader's environment on every Python the book supports.

For each of 3.11 (from 3.11.2), 3.12 and 3.13 found on this machine, other
than the version of the test run's own venv (which the whole build proves),
a fresh venv is made from the reader's pins (requirements.txt held to
constraints.txt, one universal resolve) by the same code as `make book`
(bookbuild/venv.py), TensorFlow and JAX are imported, and one page runs.

A venv takes a minute or so to install, so this runs in CI (CI=true) or with
MATGRAD_PYTHONS=1; otherwise it is skipped with a message. A version not on
the machine is skipped with a message, in CI too. CI runs it as root, since
the extra Pythons there live under root's home (.ci/run).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

from conftest import IN_CI, ROOT

sys.path.insert(0, str(ROOT))
from bookbuild import venv as bookvenv  # noqa: E402

WANTED = ((3, 11), (3, 12), (3, 13))
ENABLED = IN_CI or os.environ.get("MATGRAD_PYTHONS") == "1"

_DRIVER = """
import os, sys, jupytext, nbclient, nbformat
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf, jax
nb = nbformat.reads(jupytext.writes(jupytext.read(sys.argv[1], fmt="md:myst"), fmt="ipynb"),
                    as_version=4)
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": os.path.dirname(sys.argv[1])}}).execute()
errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
print(sys.version.split()[0], tf.__version__, jax.__version__, "errors:", len(errors))
"""


def interpreters() -> dict[tuple[int, int], str]:
    """One supported interpreter per (major, minor) found on this machine."""
    names = [f"python{m}.{n}" for m, n in WANTED]
    paths = [p for p in (__import__("shutil").which(n) for n in names) if p]
    for m, n in WANTED:
        paths += sorted(glob.glob(f"/usr/bin/python{m}.{n}"))
        paths += sorted(glob.glob(f"/usr/local/bin/python{m}.{n}"))
        paths += sorted(
            glob.glob(os.path.expanduser(f"~/.pyenv/versions/{m}.{n}.*/bin/python{m}.{n}"))
        )
    found: dict[tuple[int, int], str] = {}
    for path in paths:
        info = bookvenv.probe(path)
        if info and bookvenv.supported(info[1], info[0]) and info[1][:2] not in found:
            found[info[1][:2]] = path
    return found


# On a new machine the venv downloads every wheel (TensorFlow's and JAX's for
# this Python: over a gigabyte), the two Pythons at once; the suite's 300 s
# limit is for tests that compute, and a slow network once exceeded it.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("minor", [v for v in WANTED], ids=lambda v: f"{v[0]}.{v[1]}")
def test_reader_venv_on_this_python(minor, tmp_path):
    if not ENABLED:
        pytest.skip(
            "builds a venv per Python (a minute each): runs in CI, or with MATGRAD_PYTHONS=1"
        )
    if minor == sys.version_info[:2]:
        pytest.skip(
            f"Python {minor[0]}.{minor[1]} is the test run's own: the whole build proves it"
        )
    python = interpreters().get(minor)
    if python is None:
        pytest.skip(f"no supported Python {minor[0]}.{minor[1]} on this machine")
    version = bookvenv.probe(python)[1]
    venv = tmp_path / "venv"
    bookvenv.build(python, version, venv, requirements="requirements.txt")
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _DRIVER, str(ROOT / "index.md")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith(".".join(map(str, version))) and line.endswith("errors: 0"), line


def test_version_rule():
    """The rule the Makefile applies (bookbuild/venv.py): 3.11.2 up to 3.13, CPython."""
    assert not bookvenv.supported((3, 11, 1))
    assert bookvenv.supported((3, 11, 2)) and bookvenv.supported((3, 13, 9))
    assert not bookvenv.supported((3, 14, 0)) and not bookvenv.supported((3, 10, 13))
    assert not bookvenv.supported((3, 12, 0), "PyPy")


def test_find_python_says_what_it_needs(tmp_path):
    with pytest.raises(SystemExit, match=r"needs CPython 3.11 \(3.11.2 or newer\), 3.12 or 3.13"):
        bookvenv.find_python(str(tmp_path / "no-such-python"))

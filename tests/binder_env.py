"""The environment Binder would build, made locally and kept between runs.

Binder makes a fresh environment from ``binder/requirements.txt`` alone, then
runs ``binder/postBuild``. ``binder_env()`` does the same in
``.venv-binder/<key>/``, where the key is a hash of every file that decides
what gets installed; while none of them changes, the venv is reused (the
first build takes minutes from pip's cache, later runs none).

Run as a script (``python tests/binder_env.py``) it builds the venv and
prints its path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / ".venv-binder"
INPUTS = (
    "binder/requirements.txt",
    "binder/postBuild",
    "binder/runtime.txt",
    "requirements.txt",
    "constraints.txt",
)


def key() -> str:
    digest = hashlib.sha256()
    for name in INPUTS:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def binder_env(log=print) -> Path:
    """Path of a ready Binder-like venv (built now if the inputs changed)."""
    env = VENVS / key()
    ready = env / ".ready"
    if ready.exists():
        return env
    shutil.rmtree(VENVS, ignore_errors=True)  # venvs of older inputs
    base = getattr(sys, "_base_executable", sys.executable)  # not this venv's python
    log(f"building the Binder environment in {env.relative_to(ROOT)} (first run only)")
    subprocess.run([base, "-m", "venv", str(env)], check=True)
    bin_dir = env / "bin"
    # Binder installs with pip; here the book's own uv installs the same file
    # when it is there (make venv puts it in .venv): the pins are exact, so
    # both give the same versions, and uv takes them from the cache that
    # `make venv` filled, in seconds instead of pip's minute.
    uv = Path(sys.prefix) / "bin" / "uv"
    if uv.exists():
        install = [str(uv), "pip", "install", "--quiet", "--python", str(bin_dir / "python")]
    else:
        # -qq: pip's warnings about this machine's index configuration are
        # not about the book; errors still show. --no-compile: byte-compiling
        # every installed module (TensorFlow has thousands) took a third of
        # the build; Python compiles what the test imports when it imports it.
        install = [str(bin_dir / "python"), "-m", "pip", "install", "-qq", "--no-compile"]
        install.append("--disable-pip-version-check")
    subprocess.run([*install, "-r", "binder/requirements.txt"], cwd=ROOT, check=True)
    env_vars = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env_vars.pop("VIRTUAL_ENV", None)
    env_vars["PIP_QUIET"] = "2"
    subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env_vars, check=True)
    ready.touch()
    return env


if __name__ == "__main__":
    print(binder_env(log=lambda msg: print(msg, file=sys.stderr)))

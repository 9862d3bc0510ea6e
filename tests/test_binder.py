"""Binder installs the same pinned set that CI builds with, and matgrad."""

from __future__ import annotations

import re

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT


def _requirements(path) -> dict[str, str]:
    """Follow -r/-c includes; return {name: version} of the pins that apply here.

    Every requirement must be an exact ``==`` pin; one whose environment marker
    does not hold on this machine (``tensorflow`` off Linux x86_64) is skipped.
    """
    pins: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "-c ")):
            pins.update(_requirements((path.parent / line[3:].strip()).resolve()))
            continue
        req = Requirement(line)
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", (
            f"{path.name}: not an exact pin: {raw!r}"
        )
        if req.marker is None or req.marker.evaluate():
            pins[canonicalize_name(req.name)] = specs[0].version
    return pins


def test_binder_reuses_the_root_pins_without_copying():
    text = (ROOT / "binder" / "requirements.txt").read_text()
    assert "-r ../requirements.txt" in text
    assert "-c ../constraints.txt" in text
    own = [line for line in text.splitlines() if line.strip() and not line.startswith(("#", "-"))]
    assert own == [], f"binder/requirements.txt pins packages of its own: {own}"


def test_binder_resolves_to_the_same_versions_as_ci():
    binder = _requirements(ROOT / "binder" / "requirements.txt")
    root = _requirements(ROOT / "requirements.txt")
    lock = _requirements(ROOT / "constraints.txt")
    for name, version in root.items():
        assert binder[name] == version
        if name in lock:
            assert lock[name] == version, (
                f"{name}: requirements {version}, constraints {lock[name]}"
            )
    dev = _requirements(ROOT / "requirements-dev.txt")
    for name, version in dev.items():
        assert lock.get(name) == version, (
            f"{name}: requirements-dev {version}, constraints {lock.get(name)}"
        )


def test_postbuild_installs_matgrad_and_jupytext_viewer():
    post = (ROOT / "binder" / "postBuild").read_text()
    assert re.search(r"pip install .*-e \.", post)
    assert "Jupytext Notebook" in post
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"

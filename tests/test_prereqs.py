"""The machine's prerequisites (bookbuild/prereqs.py), checked before any work,
and a build that repairs itself when the packages or fonts change
(bookbuild/pipeline.py).

Each prerequisite is taken away in turn: a program by running the check with
a PATH that lacks it (the real command, in a subprocess), a CJK font and the
disk by giving the check an empty font folder and a full disk. Every case
must end in one message that names what is missing and the command that
installs it, within a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bookbuild import pipeline, prereqs
from conftest import ROOT
from test_bookbuild import FILES, Steps

TOOLS = ("npm", "chromium", "pdftoppm")


def run_check(target: str, path_dir: Path) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "bookbuild.prereqs", target],
        cwd=ROOT,
        env={**os.environ, "PATH": str(path_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, time.perf_counter() - start


def bin_without(tmp_path: Path, absent: str) -> Path:
    """A folder for PATH holding the real tools, all but ``absent``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in TOOLS:
        real = prereqs.shutil.which(name)
        if name != absent and real:
            (folder / name).symlink_to(real)
    return folder


@pytest.mark.parametrize("absent", TOOLS)
def test_a_missing_program_is_named_once_with_its_package(tmp_path, absent):
    for name in TOOLS:
        if name != absent and not prereqs.shutil.which(name):
            pytest.skip(f"{name} is not on this machine, so it cannot stand in")
    result, seconds = run_check("test", bin_without(tmp_path, absent))
    package = {"npm": "npm", "chromium": "chromium", "pdftoppm": "poppler-utils"}[absent]
    assert result.returncode == 2, result
    assert result.stdout == ""
    message = result.stderr
    assert message.count("cannot start") == 1
    assert absent in message.lower()
    assert f"sudo apt-get install {package}\n" in message  # this machine is Debian
    assert seconds < 5, f"the check took {seconds:.1f} s"


def test_the_book_does_not_need_the_test_tools(tmp_path):
    result, _ = run_check("book", bin_without(tmp_path, "chromium"))
    assert result.returncode == 0, result.stderr


def test_a_hidden_cjk_font_is_named_with_its_package(tmp_path):
    start = time.perf_counter()
    lacking = prereqs.missing("book", font_dirs=(tmp_path,), which=lambda name: "/bin/" + name)
    message = prereqs.message("book", lacking, "debian")
    assert [need for need, _ in lacking] == [prereqs.FONT]
    assert "CJK font" in message
    assert message.count("apt-get install") == 1
    assert "sudo apt-get install fonts-noto-cjk\n" in message
    assert time.perf_counter() - start < 5


def test_everything_missing_is_one_message_and_one_command(tmp_path):
    lacking = prereqs.missing(
        "test",
        font_dirs=(tmp_path,),
        which=lambda name: None,
        root=tmp_path,  # no .venv here: the Python and the disk are checked
        python=str(tmp_path / "python3.9"),
        disk=lambda path: 2**30,
    )
    message = prereqs.message("test", lacking, "debian")
    assert len(lacking) == 6, lacking
    install = [line for line in message.splitlines() if "apt-get install" in line]
    assert install == [
        "  sudo apt-get install python3 python3-venv npm fonts-noto-cjk chromium poppler-utils"
    ]
    assert "free disk" in message and "python3.9" in message


def test_other_platforms_get_their_own_advice():
    ubuntu = prereqs.message("test", [(prereqs.CHROMIUM, "")], "ubuntu")
    assert "sudo apt-get install chromium-browser\n" in ubuntu
    lacking = [(prereqs.NPM, "npm is not on PATH")]
    assert "brew install node" in prereqs.message("book", lacking, "macos")
    assert "package manager" in prereqs.message("book", lacking, "other")


def test_platform_from_os_release(tmp_path):
    release = tmp_path / "os-release"
    for text, expected in [
        ('ID=debian\nVERSION_ID="12"\n', "debian"),
        ("ID=ubuntu\nID_LIKE=debian\n", "ubuntu"),
        ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "ubuntu"),
        ("ID=fedora\n", "other"),
    ]:
        release.write_text(text)
        assert prereqs.platform_id(release) == expected
    assert prereqs.platform_id(tmp_path / "absent") in ("other", "macos")


def test_bad_target_is_a_value_error():
    with pytest.raises(ValueError, match="target must be 'book' or 'test', not 'pdf'"):
        prereqs.missing("pdf")


def test_the_font_files_found_are_the_families_matplotlib_draws_with():
    """The check and matplotlib agree: every file the check accepts gives
    matplotlib a family of matgrad.plotting.CJK_FONTS, and every such family
    that matplotlib knows comes from a file the check accepts."""
    from matplotlib import font_manager

    from matgrad.plotting import CJK_FONTS

    found = {str(p) for p in prereqs.cjk_font_files()}
    if not found:
        pytest.skip("no CJK font on this machine")
    faces = [(f.fname, f.name) for f in font_manager.fontManager.ttflist]  # a .ttc has several
    assert {name for fname, name in faces if fname in found} & set(CJK_FONTS)
    for fname, name in faces:
        if name in CJK_FONTS:
            assert fname in found, (fname, name)


# ---- the build repairs itself ------------------------------------------------


@pytest.fixture
def book(tmp_path):
    """A tree built once, with its own packages folder, fonts folder and matplotlib cache."""
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf8")
    for folder in ("site-packages/numpy-2.0.0.dist-info", "fonts", "mpl"):
        (tmp_path / folder).mkdir(parents=True)
    tree = pipeline.Tree(
        root=tmp_path,
        build=tmp_path / "_build",
        site_packages=tmp_path / "site-packages",
        font_dirs=(tmp_path / "fonts",),
        font_cache=tmp_path / "mpl",
    )
    steps = Steps(tree)
    assert steps.run() == 0 and steps.executed == 1
    assert steps.run() == 0 and steps.executed == 0  # nothing changed: nothing runs
    return steps


def test_a_new_font_executes_every_page_again_and_refreshes_matplotlib(book, capsys):
    root = book.tree.root
    cache = book.tree.cache / "page"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("outputs without the Chinese figures")
    font_list = root / "mpl" / "fontlist-v390.json"
    font_list.write_text(json.dumps({"ttflist": [{"fname": "/usr/share/fonts/DejaVuSans.ttf"}]}))
    (root / "fonts" / "NotoSansCJK-Regular.ttc").write_bytes(b"font")
    assert book.run() == 0
    assert book.executed == 1 and not cache.exists() and not font_list.exists()
    assert "the installed packages or fonts changed" in capsys.readouterr().out
    assert book.run() == 0 and book.executed == 0


def test_a_font_list_that_knows_the_font_is_kept(book):
    root = book.tree.root
    font = root / "fonts" / "wqy-zenhei.ttc"
    font.write_bytes(b"font")
    font_list = root / "mpl" / "fontlist-v390.json"
    font_list.write_text(json.dumps({"ttflist": [{"fname": str(font)}]}))
    assert book.run() == 0 and book.executed == 1
    assert font_list.exists()


def test_a_changed_package_executes_every_page_again(book):
    site = book.tree.site_packages
    (site / "numpy-2.0.0.dist-info").rename(site / "numpy-2.1.0.dist-info")
    assert book.run() == 0 and book.executed == 1
    assert book.run() == 0 and book.executed == 0

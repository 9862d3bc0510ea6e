"""What a release publishes besides the site: the executed notebooks, and its notes.

    python -m bookbuild notebooks           _build/matgrad-notebooks.zip
    python -m bookbuild release-notes TAG   _build/release-notes.md (TAG must be v<version>)

The book has one version number, ``version`` in ``pyproject.toml``; a release
is the tag ``v<version>``, and ``CHANGELOG.md`` has a section for it.

**Notebooks.** Every page of ``_toc.yml`` as a notebook with the outputs of
the build (read from the execution cache, so nothing runs again): a reader
without the book's tools opens it in any Jupyter, or in Colab. Its first cell
installs the pinned packages the pages import, and ``matgrad`` itself from
the repository at the release's tag. Glued numbers are outputs of the cells
that compute them, as in any notebook.
"""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

import yaml

from bookbuild.pages import BUILD, ROOT, toc_pages

NOTEBOOKS = BUILD / "matgrad-notebooks.zip"
NOTES = BUILD / "release-notes.md"
# What the pages import, of requirements.txt (not JupyterLab and its helpers).
READER_PACKAGES = ("numpy", "sympy", "matplotlib", "tensorflow-cpu", "tensorflow", "jax", "jaxlib")
READER_PACKAGES += ("myst-nb",)  # glue, which the pages call


def version() -> str:
    """The book's version: ``project.version`` of pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def repository() -> str:
    """The repository's URL, as the launch buttons use it (``_config.yml``)."""
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def install_cell() -> str:
    """The first cell of every notebook: the pinned packages, then matgrad at the tag."""
    pins = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        name = re.split(r"[=<>;\s]", spec, maxsplit=1)[0]
        if name in READER_PACKAGES:
            pins.append('"' + spec.replace('"', "'") + '"')
    pins.append(f'"matgrad @ git+{repository()}@v{version()}"')
    return (
        "# The packages these pages were built with (the book's pins), and the\n"
        "# book's helper package at this release.\n"
        "%pip install --quiet " + " \\\n    ".join(pins)
    )


def executed_notebook(page: Path):
    """``page`` as an executed notebook: its cells with the build's outputs,
    the install cell first."""
    import nbformat
    from jupyter_cache import get_cache

    from bookbuild import execute_pages

    notebook = execute_pages.read(ROOT / page)
    try:
        _, notebook = get_cache(execute_pages.CACHE).merge_match_into_notebook(notebook)
    except KeyError:  # not in the cache: a page with no code (glossary, references)
        if any(cell.cell_type == "code" for cell in notebook.cells):
            raise SystemExit(f"{page} is not in the execution cache: run make book first") from None
    notebook.cells.insert(0, nbformat.v4.new_code_cell(install_cell()))
    notebook.metadata.pop("source_map", None)
    nbformat.validate(notebook)
    return notebook


def notebooks() -> int:
    """`make notebooks`: every page, executed, in one zip."""
    import nbformat

    with zipfile.ZipFile(NOTEBOOKS, "w", zipfile.ZIP_DEFLATED) as archive:
        for page in toc_pages():
            text = nbformat.writes(executed_notebook(page))
            archive.writestr(f"matgrad-{version()}/{page.with_suffix('.ipynb').as_posix()}", text)
    print(f"wrote {NOTEBOOKS} ({len(toc_pages())} notebooks)")
    return 0


def changelog_section(text: str, number: str) -> str:
    """The body of ``## <number>`` in a changelog (up to the next ``## ``)."""
    match = re.search(rf"^## \[?{re.escape(number)}\]?\b.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not match:
        raise ValueError(f"CHANGELOG.md has no section '## {number}'")
    return match.group(1).strip()


def release_notes(tag: str) -> int:
    """`make release-notes TAG=v…`: the tag must be the book's version; the
    notes are its CHANGELOG section."""
    if tag != f"v{version()}":
        raise SystemExit(f"tag {tag!r} is not v{version()}, the version in pyproject.toml")
    body = changelog_section((ROOT / "CHANGELOG.md").read_text(), version())
    NOTES.parent.mkdir(exist_ok=True)
    NOTES.write_text(body + "\n")
    print(f"wrote {NOTES}")
    return 0

"""What a release publishes, checked offline (bookbuild/release.py, .github/).

- The three workflows validate against GitHub's workflow schema
  (check-jsonschema's copy, shipped in the package: no network), and every
  step that runs a command calls the Makefile, .ci/run, apt-get or gh.
- CITATION.cff holds what the Citation File Format 1.2.0 requires, with the
  book's version, licences and repository. (cffconvert, the format's own
  validator, pins jsonschema below 4, which Jupyter's packages cannot share a
  venv with; the required keys and their forms are checked here instead.)
- The version is one number: pyproject.toml's, the tag's, CITATION.cff's,
  a section of CHANGELOG.md, and the footer of every built page.
- The notebook zip: every page of _toc.yml, each a valid notebook whose
  first cell installs the pins, with the build's outputs.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from bookbuild import release
from conftest import HTML, ROOT, site_pages, source_page, toc_pages

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
SPDX_IDS = {"MIT", "CC-BY-4.0"}


def test_the_three_workflows_exist():
    assert [w.name for w in WORKFLOWS] == ["ci.yml", "links.yml", "publish.yml"]


def test_workflows_validate_against_githubs_schema():
    checker = Path(sys.executable).parent / "check-jsonschema"
    result = subprocess.run(
        [checker, "--builtin-schema", "vendor.github-workflows", *WORKFLOWS],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_steps_call_the_makefile(workflow):
    allowed = re.compile(
        r"^\s*(make |sudo .*\.ci/run|sudo apt-get|gh |find |grep |open=|if |else|fi|cp |\|\| cp )"
    )
    for job in yaml.safe_load(workflow.read_text())["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                line = line.strip().rstrip("\\").strip()
                if line and not line.startswith(("#", "--", "_build/")):
                    assert allowed.match(line), f"{workflow.name}: {line!r}"


def test_citation_file():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    for key in ("cff-version", "message", "title", "authors"):
        assert cff.get(key), f"CITATION.cff lacks {key}"
    assert cff["cff-version"] == "1.2.0"
    for author in cff["authors"]:
        assert author.get("name") or author.get("family-names"), author
    assert cff["version"] == release.version()
    datetime.date.fromisoformat(cff["date-released"])
    licences = cff["license"] if isinstance(cff["license"], list) else [cff["license"]]
    assert set(licences) <= SPDX_IDS, licences
    assert cff["repository-code"] == release.repository()
    assert cff["type"] in ("software", "dataset")


def test_licences_are_the_readmes():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Creative Commons Attribution 4.0 International" in (ROOT / "LICENSE-TEXT").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "MIT" in readme and "CC BY 4.0" in readme


def test_the_changelog_has_this_version_and_the_tag_must_match():
    assert release.changelog_section((ROOT / "CHANGELOG.md").read_text(), release.version())
    with pytest.raises(SystemExit, match="is not v"):
        release.release_notes("v0.0.0")
    with pytest.raises(ValueError, match="no section '## 9.9'"):
        release.changelog_section("## 1.0\n- x\n", "9.9")


@pytest.mark.parametrize("page", site_pages(), ids=str)
def test_footer_shows_version_and_licences(page):
    path = HTML / page.with_suffix(".html")
    if not path.exists():
        pytest.skip("the site is not built (make book)")
    html = path.read_text("utf8")
    assert release.version() in html
    assert "LICENSE-TEXT" in html and "/LICENSE" in html
    assert "issues/new" in html, "no issue button"
    assert f"blob/main/{source_page(page).as_posix()}" in html, "no source button"


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    if not (ROOT / "_build" / ".jupyter_cache").exists():
        pytest.skip("no execution cache (make book)")
    zipped = tmp_path_factory.mktemp("release") / "notebooks.zip"
    original, release.NOTEBOOKS = release.NOTEBOOKS, zipped
    try:
        assert release.notebooks() == 0
    finally:
        release.NOTEBOOKS = original
    with zipfile.ZipFile(zipped) as archive:
        return {
            name: nbformat.reads(archive.read(name), as_version=4) for name in archive.namelist()
        }


def test_the_zip_holds_every_page_as_a_valid_executed_notebook(notebooks):
    folder = f"matgrad-{release.version()}"
    expected = {f"{folder}/{p.with_suffix('.ipynb').as_posix()}" for p in toc_pages()}
    assert set(notebooks) == expected
    for name, notebook in notebooks.items():
        nbformat.validate(notebook)
        install = notebook.cells[0]
        assert install.cell_type == "code" and install.source.count("%pip install") == 1, name
        assert "numpy==" in install.source and "tensorflow-cpu==" in install.source, name
        assert f"@v{release.version()}" in install.source, name
    chapter = notebooks[f"{folder}/chapters/04_vjp.ipynb"]
    outputs = [o for c in chapter.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert len(outputs) > 10, "the notebook lacks the build's outputs"


@pytest.mark.parametrize("edition", ["en", "zh_CN"])
def test_the_pdf_cover_shows_version_date_and_licences(edition):
    import os

    from pypdf import PdfReader

    path = ROOT / "_build" / "pdf" / f"matgrad-{edition}.pdf"
    if not path.exists():
        if os.environ.get("MATGRAD_REQUIRE_PDF") == "1":
            pytest.fail(f"{path} is missing (make pdf)")
        pytest.skip("no PDFs (make pdf)")
    cover = PdfReader(path).pages[0].extract_text()
    assert release.version() in cover, cover
    assert re.search(r"\d{4}-\d{2}-\d{2}", cover), cover
    assert "CC BY 4.0" in cover and "MIT" in cover, cover

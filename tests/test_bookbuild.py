"""The decisions of `make book` (bookbuild/pipeline.py), on a small tree of
files in a temporary folder: what runs again after each kind of change.

No page is executed and Sphinx does not run: the two steps are stand-ins
that note how they were called and succeed or fail on request.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from bookbuild import pdf_links, pipeline

FILES = {
    "index.md": "# Home\n",
    "chapters/01_intro.md": "# One\n",
    "_config.yml": "title: t\n",
    "_toc.yml": "root: index\n",
    "src/matgrad/__init__.py": "X = 1\n",
    "_ext/site_html.py": "def setup(app): pass\n",
    "_static/matgrad.css": "body {}\n",
    "locales/zh_CN/LC_MESSAGES/index.po": 'msgid "Home"\nmsgstr "首页"\n',
    "bookbuild/pipeline.py": "# the build\n",
    "Makefile": "book:\n",
}


class Steps:
    """Stand-ins for the executor and the Sphinx builds."""

    def __init__(self, tree: pipeline.Tree):
        self.tree, self.executed, self.built = tree, 0, []
        self.execute_status = self.build_status = self.assets_status = 0
        self.report = ""  # what a page that fails in Sphinx reports
        self.events: list[str] = []  # the order of the steps

    def execute_pages(self) -> int:
        self.executed += 1
        self.events.append("execute")
        return self.execute_status

    def start_assets(self):
        """`make assets` (MathJax and Vega) as a process that has started."""
        steps = self
        steps.events.append("assets started")

        class Process:
            returncode = None

            def wait(self) -> int:
                steps.events.append("assets done")
                self.returncode = steps.assets_status
                return self.returncode

        return Process()

    def start_editions(self, editions, reread_all):
        """The Sphinx builds, started: they build on ``finish()``, or end on ``cancel()``."""
        steps = self
        steps.events.append("editions started")

        class Site:
            def cancel(self) -> None:
                steps.events.append("editions cancelled")

            def finish(self) -> int:
                steps.events.append("build")
                steps.built.append((tuple(editions), reread_all))
                (steps.tree.html / "index.html").parent.mkdir(parents=True, exist_ok=True)
                (steps.tree.html / "index.html").write_text("<html></html>")
                if steps.report:
                    log = steps.tree.html / "reports" / "chapters" / "01_intro.log"
                    log.parent.mkdir(parents=True, exist_ok=True)
                    log.write_text(steps.report)
                return steps.build_status

        return Site()

    def run(self) -> int:
        self.executed, self.built, self.events = 0, [], []
        return pipeline.build(self.tree, self.execute_pages, self.start_editions, self.start_assets)


@pytest.fixture
def book(tmp_path):
    """A tree built once, successfully."""
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf8")
    steps = Steps(pipeline.Tree(root=tmp_path, build=tmp_path / "_build"))
    assert steps.run() == 0
    return steps


def edit(steps: Steps, name: str) -> None:
    path = steps.tree.root / name
    path.write_text(path.read_text("utf8") + "changed\n", "utf8")


def mark(folder) -> object:
    """A file in ``folder``, to see whether the build removed the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "marker").write_text("")
    return folder / "marker"


def test_first_build_does_everything(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf8")
    tree = pipeline.Tree(root=tmp_path, build=tmp_path / "_build")
    plan = pipeline.plan(tree)
    assert (
        plan.up_to_date,
        plan.clear_cache,
        plan.forget_doctrees,
        plan.reread_all,
        plan.execute,
    ) == (False, True, True, True, True)
    steps = Steps(tree)
    assert steps.run() == 0
    assert steps.executed == 1 and steps.built == [(("en", "zh_CN"), True)]
    for stamp in (tree.package_ok, tree.exec_ok, tree.code_ok, tree.book_ok):
        assert stamp.read_text().strip(), stamp


def test_nothing_changed(book, capsys):
    plan = pipeline.plan(book.tree)
    assert plan.up_to_date and not plan.execute and not plan.clear_cache
    assert book.run() == 0
    assert book.executed == 0 and book.built == []
    assert "nothing changed" in capsys.readouterr().out


def test_assets_are_made_while_the_pages_run(book):
    """MathJax and Vega, which only Sphinx needs, are made beside the execution."""
    edit(book, "chapters/01_intro.md")
    assert book.run() == 0
    assert book.events == [
        "editions started",
        "assets started",
        "execute",
        "assets done",
        "build",
    ]


def test_failed_assets_fail_the_build(book, capsys):
    edit(book, "chapters/01_intro.md")
    book.assets_status = 2
    assert book.run() == 2
    assert book.built == [] and "`make assets` failed (exit 2)" in capsys.readouterr().err
    assert book.events[-1] == "editions cancelled"
    book.assets_status = 0  # (the pages that ran are not run again)
    assert book.run() == 0 and book.executed == 0 and len(book.built) == 1


def test_no_assets_when_nothing_changed(book):
    assert book.run() == 0
    assert book.events == []


def test_a_page_changed(book):
    cached = mark(book.tree.cache)
    edit(book, "chapters/01_intro.md")
    assert book.run() == 0
    assert book.executed == 1 and book.built == [(("en", "zh_CN"), False)]
    assert cached.exists(), "the other pages stay cached"
    assert pipeline.plan(book.tree).up_to_date


def test_the_package_changed(book):
    cached, doctree = mark(book.tree.cache), mark(book.tree.build / ".doctrees")
    edit(book, "src/matgrad/__init__.py")
    plan = pipeline.plan(book.tree)
    assert plan.clear_cache and plan.execute and not plan.up_to_date
    assert book.run() == 0
    assert not cached.exists() and not doctree.exists(), "every page runs and is read again"
    assert book.executed == 1
    assert not pipeline.plan(book.tree).clear_cache


def test_an_extension_changed(book):
    edit(book, "_ext/site_html.py")
    assert book.run() == 0
    assert book.executed == 0, "no page's code changed"
    assert book.built == [(("en", "zh_CN"), True)], "every page is rewritten"


def made_pdfs(tree: pipeline.Tree) -> list:
    """What `make pdf` leaves: both PDFs, their copies at the site's top, and
    the index pages (the Chinese one twice) with the note that links them."""
    made = []
    for name in pdf_links.PDF_FILES.values():
        for folder in (tree.build / "pdf", tree.html):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(b"%PDF-")
            made.append(folder / name)
    for pages in pdf_links.index_pages(tree.build).values():
        for page in pages:
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text("<html><h1>Title</h1><p>text</p></html>", "utf8")
    pdf_links.add(tree.build)
    return made


def linked(tree: pipeline.Tree) -> list:
    pages = pdf_links.index_pages(tree.build)
    return [p for ps in pages.values() for p in ps if "matgrad-book-pdfs" in p.read_text("utf8")]


def test_pdfs_stay_while_nothing_changed(book):
    made = made_pdfs(book.tree)
    assert len(linked(book.tree)) == 3
    assert book.run() == 0 and book.built == []
    assert all(p.exists() for p in made) and len(linked(book.tree)) == 3


def test_a_new_site_removes_the_pdfs_and_their_links(book):
    made = made_pdfs(book.tree)
    # (a build whose stand-in leaves the Chinese index pages as they are)
    edit(book, "locales/zh_CN/LC_MESSAGES/index.po")
    assert book.run() == 0
    assert not any(p.exists() for p in made), "a PDF is never older than the site"
    assert linked(book.tree) == [], "no index page links a PDF that is gone"


def test_the_pdf_note_goes_in_once_and_comes_out():
    page = "<main><h1>Title</h1><p>Intro</p><h1>Other</h1></main>"
    for edition in pdf_links.EDITIONS:
        once = pdf_links.with_note(page, edition)
        assert pdf_links.with_note(once, edition) == once, "adding it again changes nothing"
        assert once.count("matgrad-book-pdfs") == 1
        assert once.index("matgrad-book-pdfs") < once.index("<p>Intro"), "below the title"
        links = re.findall(r'href="([^"]+)"', once)
        up = "" if edition == "en" else "../"
        assert sorted(links) == sorted(up + name for name in pdf_links.PDF_FILES.values())
        assert pdf_links.without_note(once) == page
    with pytest.raises(ValueError, match="zh_CN index page has no </h1>"):
        pdf_links.with_note("<p>no title</p>", "zh_CN")


def test_the_last_build_failed(book, capsys):
    edit(book, "chapters/01_intro.md")
    book.build_status, book.report = 2, "the failing cell"
    assert book.run() == 2
    assert "the failing cell" in capsys.readouterr().out
    assert not book.tree.book_ok.exists()
    # The next build: nothing changed, but Sphinx must read every page again
    # (its saved environment would skip the failing page); the pages ran.
    doctree = mark(book.tree.build / ".doctrees")
    plan = pipeline.plan(book.tree)
    assert plan.forget_doctrees and not plan.up_to_date and not plan.execute
    book.build_status, book.report = 0, ""
    assert book.run() == 0
    assert not (book.tree.html / "reports").exists(), "an old report is gone"
    assert not doctree.exists() and book.built and book.executed == 0
    assert pipeline.plan(book.tree).up_to_date


def test_a_page_failed_to_execute(book):
    edit(book, "chapters/01_intro.md")
    book.execute_status = 1
    assert book.run() == 1 and book.built == []
    assert book.events == [
        "editions started",
        "assets started",
        "execute",
        "assets done",
        "editions cancelled",
    ]
    book.execute_status = 0
    assert pipeline.plan(book.tree).execute, "the failing page runs again"
    assert book.run() == 0 and book.executed == 1


def test_a_translation_changed(book):
    edit(book, "locales/zh_CN/LC_MESSAGES/index.po")
    plan = pipeline.plan(book.tree)
    assert not plan.up_to_date and not plan.execute and not plan.reread_all
    assert plan.editions == ("en", "zh_CN")
    assert book.run() == 0 and book.executed == 0


def test_the_site_was_removed(book):
    (book.tree.html / "index.html").unlink()
    assert not pipeline.plan(book.tree).up_to_date


def test_derived_files_are_not_inputs(book):
    for name in (
        "chapters/01_intro.ipynb",
        "src/matgrad/__pycache__/x.pyc",
        "locales/zh_CN/LC_MESSAGES/index.mo",
        "chapters/.ipynb_checkpoints/a.md",
    ):
        (book.tree.root / name).parent.mkdir(parents=True, exist_ok=True)
        (book.tree.root / name).write_text("derived")
    assert pipeline.plan(book.tree).up_to_date


@pytest.mark.skipif(not shutil.which("sha256sum"), reason="needs coreutils' sha256sum")
def test_digest_is_the_shell_pipelines(book):
    """The digest is what `find | sort | xargs sha256sum | sha256sum` gives."""
    inputs = ("index.md", "chapters", "src/matgrad", "locales")
    shell = subprocess.run(
        f"find {' '.join(inputs)} -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum"
        " | sha256sum | cut -d' ' -f1",
        shell=True,
        cwd=book.tree.root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert pipeline.digest(book.tree.root, inputs) == shell


def test_slow_pages_start_first_and_exist():
    from bookbuild import execute_pages
    from bookbuild.pages import ROOT, toc_pages

    names = [p.as_posix() for p in toc_pages()]
    assert set(execute_pages.SLOW_FIRST) <= set(names), "SLOW_FIRST names a page not in _toc.yml"
    order = execute_pages.in_execution_order([ROOT / n for n in names])
    assert [p.relative_to(ROOT).as_posix() for p in order[: len(execute_pages.SLOW_FIRST)]] == list(
        execute_pages.SLOW_FIRST
    )
    rest = [p.relative_to(ROOT).as_posix() for p in order[len(execute_pages.SLOW_FIRST) :]]
    assert rest == [n for n in names if n not in execute_pages.SLOW_FIRST]


# ---- the table of editions and the local server ------------------------------


def test_the_editions_table_names_each_edition_once():
    from bookbuild import editions
    from bookbuild.pages import ROOT

    rows = editions.EDITIONS
    assert editions.SOURCE.folder == "" and all(row.folder for row in rows[1:])
    for field in ("language", "hreflang", "name", "folder"):
        values = [getattr(row, field) for row in rows]
        assert len(set(values)) == len(values), field
    for row in rows[1:]:  # a translation is its row and its catalogs
        assert (ROOT / "locales" / row.language / "LC_MESSAGES" / "sphinx.po").exists()
        assert editions.sphinx_overrides(row)["language"] == row.language
    assert editions.sphinx_overrides(editions.SOURCE) == {}
    assert editions.edition(None) is editions.SOURCE
    with pytest.raises(ValueError, match="no edition"):
        editions.edition("xx")


def test_links_between_editions_are_relative():
    from bookbuild.editions import edition, relative_link

    en, zh = edition("en"), edition("zh_CN")
    assert relative_link("chapters/04_vjp", en, zh) == "../zh_CN/chapters/04_vjp.html"
    assert relative_link("chapters/04_vjp", zh, en) == "../../chapters/04_vjp.html"
    assert relative_link("index", en, zh) == "zh_CN/index.html"
    assert relative_link("index", zh, en) == "../index.html"


def test_each_edition_has_its_sphinx_builds():
    from bookbuild import build_site
    from bookbuild.pages import BUILD

    builds = build_site.SPHINX_BUILDS
    assert builds["en"]["out"] == BUILD / "html"
    assert builds["zh_CN"]["out"] == BUILD / "zh_CN" / "html"
    assert builds["singlehtml-zh_CN"]["doctrees"] == builds["zh_CN"]["doctrees"]
    assert builds["singlehtml-zh_CN"]["overrides"]["html_title"] == "矩阵的梯度"
    assert set(builds) == {
        *("en", "zh_CN", "singlehtml-en", "singlehtml-zh_CN", "gettext"),
        *("linkcheck-en", "linkcheck-zh_CN"),
    }


def test_the_local_server_serves_a_folder_quietly(tmp_path, capfd):
    import urllib.request

    from bookbuild.local_server import serving

    (tmp_path / "page.html").write_text("<p>hello</p>")
    with serving(tmp_path) as url:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/page.html") as response:
            assert response.read() == b"<p>hello</p>"
    assert capfd.readouterr().err == ""


def test_only_the_builds_processes_hide_the_iri_grammar():
    """bookbuild/__init__.py's skip_iri_grammar: called by the build's entry
    points, never by importing the package (pytest, a kernel)."""
    import sys

    from bookbuild.pages import ROOT

    def run(code: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    imported = "import sys, bookbuild.pipeline, bookbuild.build_site, bookbuild.__main__"
    assert run(f"{imported}; print('rfc3987_syntax' in sys.modules)") == "False"
    called = "import sys, bookbuild; bookbuild.skip_iri_grammar(); import jsonschema"
    assert run(f"{called}; print(sys.modules['rfc3987_syntax'] is None)") == "True"
    for entry in ("__main__.py", "build_site.py"):
        assert "skip_iri_grammar()" in (ROOT / "bookbuild" / entry).read_text(), entry


def test_a_page_that_reads_the_book_runs_again_when_another_page_changes(tmp_path):
    """jupyter-cache keys a page by its own code; the exercise list, whose code
    reads every page, must run again when another page gains an exercise."""
    from types import SimpleNamespace

    from bookbuild import execute_pages
    from bookbuild.pages import ROOT

    lister = ROOT / "appendix" / "exercises.md"
    plain = ROOT / "chapters" / "01_symbolic.md"
    assert execute_pages.reads_the_book(execute_pages.read(lister))
    assert not execute_pages.reads_the_book(execute_pages.read(plain))

    class Cache:  # jupyter-cache's answer: a record, with what it stored
        def __init__(self, data):
            self.data = data

        def match_cache_notebook(self, nb):
            return SimpleNamespace(data=self.data)

    now = execute_pages.book_digest()
    assert execute_pages.cached(Cache({"book_digest": now}), lister, now)
    assert not execute_pages.cached(Cache({"book_digest": "before"}), lister, now)
    assert not execute_pages.cached(Cache({}), lister, now)
    assert execute_pages.cached(Cache({}), plain, now)  # its own code is its key


def test_pieces_of_one_stream_are_joined_exactly():
    """A print split by the kernel's flush timer is shown as one output, with
    its text unchanged; other streams and outputs keep their places."""
    import nbformat

    from bookbuild.execute_pages import join_stream_pieces

    out = nbformat.v4.new_output
    cell = nbformat.v4.new_code_cell("print('shape:', (3, 4))")
    cell.outputs = [
        out("stream", name="stdout", text="shape:"),
        out("stream", name="stdout", text=" (3, 4)\n"),
        out("stream", name="stderr", text="a\n"),
        out("stream", name="stdout", text="b\n"),
        out("display_data", data={"text/plain": "x"}),
        out("stream", name="stdout", text="c"),
        out("stream", name="stdout", text=" \n"),
    ]
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("text")])
    join_stream_pieces(nb)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in cell.outputs] == [
        ("stream", "stdout", "shape: (3, 4)\n"),
        ("stream", "stderr", "a\n"),
        ("stream", "stdout", "b\n"),
        ("display_data", None, None),
        ("stream", "stdout", "c \n"),
    ]

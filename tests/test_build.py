"""The build helper executes exactly the pages the book build would execute."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import ROOT, build_helper, toc_pages


def test_parallel_execution_covers_the_executed_pages():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    excluded = set(config["execute"]["exclude_patterns"])
    expected = {str(p) for p in toc_pages()} - excluded
    got = {str(p.relative_to(ROOT)) for p in build_helper().book_pages()}
    assert got == expected
    assert excluded <= {str(p) for p in toc_pages()}, "exclude_patterns name pages not in the book"


def test_excluded_pages_have_no_code():
    import jupytext

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    for page in config["execute"]["exclude_patterns"]:
        nb = jupytext.read(ROOT / page, fmt="md:myst")
        assert not [c for c in nb.cells if c.cell_type == "code"], (
            f"{page} has code but is not executed"
        )


def test_makefile_runs_the_pipeline():
    """`make book` is one command, bookbuild's pipeline (which runs the helper
    before the Sphinx builds: tests/test_bookbuild.py)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nbook:") :].split("\n\n")[0]
    assert "-m bookbuild book" in recipe


def test_skip_covers_every_input_of_the_site():
    """The no-change shortcut must see every file that feeds the site."""
    from bookbuild import pipeline

    for name in (
        "_static",
        "_ext",
        "bookbuild",
        "locales",
        "requirements.txt",
        "constraints.txt",
        "package-lock.json",
        "Makefile",
        *pipeline.EXEC_INPUTS,
    ):
        assert name in pipeline.SITE_INPUTS, f"SITE_INPUTS misses {name}"
    folders = {p.parts[0] if len(p.parts) > 1 else str(p) for p in toc_pages()}
    for name in sorted(folders) + ["_config.yml", "_toc.yml", "src/matgrad"]:
        assert name in pipeline.EXEC_INPUTS, f"EXEC_INPUTS misses {name} (a page lives there)"


def test_forked_kernels_are_fresh_and_show_figures(tmp_path, zygote_env, monkeypatch):
    """A kernel from the build's zygote (bookbuild/kernel_zygote.py, conftest's
    zygote_env): TensorFlow is already imported, but the kernel runs in the
    page's folder with the manager's environment, shows a matplotlib figure,
    and stops cleanly."""
    import nbformat
    from nbclient import NotebookClient

    for key, value in {**zygote_env, "MATGRAD_PROBE": "seen"}.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import os, sys\n"
                "print('tensorflow' in sys.modules, os.getcwd(),"
                " os.environ.get('MATGRAD_PROBE'))"
            ),
            nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([0, 1])"),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    with build_helper().kernel_config() as config:
        NotebookClient(
            nb,
            kernel_name="python3",
            timeout=120,
            config=config,
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute()
    assert nb.cells[0].outputs[0]["text"].split() == ["True", str(tmp_path), "seen"]
    assert any("image/png" in out.get("data", {}) for out in nb.cells[1].outputs)


def _ext(name: str):
    """One of the book's Sphinx extensions (_ext/NAME.py), imported by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_translated_nodes_forget_their_messages_document():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    settings = get_default_settings(Parser)
    page, message = new_document("page", settings), new_document("message", settings)
    text, own = nodes.Text("translated"), nodes.Text("the page's")
    text.document, own.document = message, page  # as publish_msgstr leaves them
    paragraph = nodes.paragraph("", "", text, own)
    page += paragraph
    assert text.document is message
    forget = _ext("translated_nodes").forget_foreign_documents
    assert forget(page) == 1
    assert text.document is page and own.document is page  # from the parent now
    assert forget(page) == 0


def test_translated_citations_keep_one_record_per_citation():
    # A page cites "a" (id3) and "a,b" (id4); a translated paragraph recorded
    # them again under its own ids, one of which (id1) is the page's heading.
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    from sphinx.addnodes import pending_xref
    from sphinxcontrib.bibtex.citation_target import parse_citation_targets
    from sphinxcontrib.bibtex.roles import CitationRef

    page = new_document("page", get_default_settings(Parser))
    page += nodes.section(ids=["id1"])
    for ref_id, target in (("id3", "a"), ("id4", "a,b")):
        page += pending_xref(ids=[ref_id], refdomain="cite", reftarget=target)
    for node in page.findall(nodes.Element):
        for ref_id in node.get("ids", []):
            page.ids[ref_id] = node

    def record(ref_id, target, docname="page"):
        return CitationRef(ref_id, docname, 1, list(parse_citation_targets(target)))

    live = [record("id3", "a"), record("id4", "a,b")]
    other_page = record("id1", "c", "other")
    stale = [record("id1", "a"), record("id3", "b"), record("id4", "a,b")]
    refs = [*live, other_page, *stale]
    keep = _ext("translated_citations").keep_page_citations
    assert keep(refs, "page", page) == 3
    assert refs == [*live, other_page]
    assert keep(refs, "page", page) == 0


def test_a_page_that_ran_again_depends_on_its_stamp(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from bookbuild import pages

    monkeypatch.setattr(pages, "STAMPS", tmp_path)
    reread = _ext("reread_executed")
    noted = []
    env = SimpleNamespace(
        doc2path=lambda docname, base: f"{docname}.md", note_dependency=noted.append
    )
    app = SimpleNamespace(env=env)
    stamp = pages.stamp(Path("appendix/tolerances.md"))
    assert stamp == tmp_path / "appendix" / "tolerances.stamp"
    reread.note_stamp(app, "appendix/tolerances", [""])
    # a page that has not run yet gets an old stamp, so that its first run is newer
    assert noted == [str(stamp)] and stamp.stat().st_mtime == 0
    stamp.touch()  # the page runs
    reread.note_stamp(app, "appendix/tolerances", [""])
    assert noted == [str(stamp)] * 2 and stamp.stat().st_mtime > 0


def test_built_doctrees_hold_no_other_document(built_site):
    # What the extension is for: the Chinese doctrees carried each message's
    # own document, and reading them back was most of the Chinese build.
    import pickle

    doctrees = sorted((ROOT / "_build").glob("**/.doctrees/**/*.doctree"))
    assert any("zh_CN" in p.parts for p in doctrees), "no Chinese doctrees found"
    for path in doctrees:
        doctree = pickle.loads(path.read_bytes())
        foreign = [
            type(node).__name__
            for node in doctree.findall(include_self=False)
            if node.__dict__.get("_document") not in (None, doctree)
        ]
        assert not foreign, (path.relative_to(ROOT), foreign[:5])


def _numref_site(tmp_path, extensions: list[str]):
    """A three-page Sphinx site whose pages cite each other's figures and
    sections by number; its HTML, and how many doctrees it unpickled."""
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    src = tmp_path / "src"
    src.mkdir(parents=True)
    conf = f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
    conf += f"extensions = {extensions!r}\nnumfig = True\n"
    (src / "conf.py").write_text(conf)
    (src / "index.rst").write_text("Book\n====\n\n.. toctree::\n   :numbered:\n\n   a\n   b\n")
    for name, other in (("a", "b"), ("b", "a")):
        figures = "".join(
            f".. _fig-{name}{i}:\n\n.. figure:: x.png\n\n   Figure {i} of {name}.\n\n"
            for i in range(3)
        )
        cites = " ".join(f":numref:`fig-{page}{i}`" for page in (name, other) for i in range(3))
        (src / f"{name}.rst").write_text(
            f".. _sec-{name}:\n\nPage {name}\n======\n\n{figures}"
            f"See {cites} and :numref:`sec-{other}`.\n"
        )
    loads = []
    original = BuildEnvironment.get_doctree

    def counted(env, docname):
        loads.append(docname)
        return original(env, docname)

    out = tmp_path / "html"
    BuildEnvironment.get_doctree = counted
    try:
        app = Sphinx(src, src, out, tmp_path / "doctrees", "html", status=None, warning=None)
        app.build()
    finally:
        BuildEnvironment.get_doctree = original
    html = {name: (out / f"{name}.html").read_text() for name in ("a", "b")}
    return html, loads


def test_numbered_references_read_each_doctree_once_and_resolve_as_sphinxs(tmp_path):
    import re

    theirs, their_loads = _numref_site(tmp_path / "sphinx", [])
    ours, our_loads = _numref_site(tmp_path / "book", ["numref_doctrees"])
    assert ours == theirs  # the same numbers, titles and links
    assert re.search(r"Fig\. 2\.3", ours["a"]) and re.search(r"Section 1", ours["b"])
    # Sphinx unpickles the target page for each of the 14 numbered
    # references; the extension, each target page once
    assert their_loads.count("a") - our_loads.count("a") == 6


def test_the_chinese_configuration_loads_jiebas_dictionary(tmp_path, monkeypatch):
    # before `make book`'s Sphinx waits for the pages (and English loads nothing)
    from pathlib import Path
    from types import SimpleNamespace

    import jieba

    zh_search = _ext("zh_search")
    monkeypatch.setattr(jieba.dt, "tmp_dir", jieba.dt.tmp_dir)  # restored afterwards
    jieba.dt.initialized = False
    app = SimpleNamespace(outdir=str(tmp_path / "en" / "html"), srcdir=str(ROOT))
    zh_search._configure(app, SimpleNamespace(language="en", html_search_options=None))
    assert not jieba.dt.initialized
    app.outdir = str(tmp_path / "zh_CN" / "html")
    (tmp_path / "zh_CN").mkdir()  # Sphinx makes the output folder
    config = SimpleNamespace(language="zh_CN", html_search_options=None)
    zh_search._configure(app, config)
    assert jieba.dt.initialized and jieba.dt.tmp_dir == str(tmp_path / "zh_CN")
    words = Path(config.html_search_options["dict"]).read_text("utf8").split("\n")
    assert "雅可比 1000 n" in words


def test_a_folded_code_cells_toggle_speaks_the_editions_language():
    from types import SimpleNamespace

    code_toggle = _ext("editions").code_toggle
    english = SimpleNamespace(language="en", nb_code_prompt_show="Show code cell {type}")
    code_toggle(english)
    assert english.nb_code_prompt_show == "Show code cell {type}"  # MyST-NB's own
    chinese = SimpleNamespace(language="zh_CN")
    code_toggle(chinese)
    assert (chinese.nb_code_prompt_show, chinese.nb_code_prompt_hide) == ("显示代码", "隐藏代码")


def test_chinese_indexer_splits_and_stems_as_sphinxs():
    # The same words and stems as Sphinx's own indexer; only the lookup differs.
    from sphinx.search import zh

    text = "矩阵的梯度 tape.gradient returns the sum of Y; VJP 与 JVP, MatMul grad, NN"
    ours, theirs = _ext("zh_search").chinese_indexer()({}), zh.SearchChinese({})
    words = ours.split(text)
    assert words == theirs.split(text) and "gradient" in words
    assert [ours.stem(w) for w in words] == [theirs.stem(w) for w in words]
    assert isinstance(ours.latin_terms, set) and "VJP" in ours.latin_terms


def test_msgstr_documents_get_the_same_settings():
    from docutils.parsers.rst import Parser
    from myst_parser.mdit_to_docutils import base

    fast = _ext("msgstr_parsing")
    one, two = fast.make_document("a"), fast.make_document("b", parser_cls=Parser)
    reference = fast._original("a")
    assert {k: repr(v) for k, v in vars(one.settings).items()} == {
        k: repr(v) for k, v in vars(reference.settings).items()
    }
    assert one.settings is not two.settings  # each document its own copy,
    assert one.settings.record_dependencies is not two.settings.record_dependencies  # deep
    assert one["source"] == "a" and two["source"] == "b"
    assert base.make_document is not fast.make_document  # only setup() installs it


def test_msgstr_parsers_parse_as_new_ones():
    """A reused MyST parser gives the tokens a new one gives, on every
    translated message, and each call gets its own options and renderer."""
    from babel.messages.pofile import read_po
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.sphinx_ import SphinxRenderer
    from myst_parser.parsers import sphinx_ as myst_sphinx

    fast = _ext("msgstr_parsing")
    config = MdParserConfig(
        enable_extensions=set(
            yaml.safe_load((ROOT / "_config.yml").read_text())["parse"]["myst_enable_extensions"]
        )
    )
    one, two = (fast.create_md_parser(config, SphinxRenderer) for _ in range(2))
    assert one.options is not two.options and one.renderer is not two.renderer
    assert one.renderer.md is one and two.renderer.md is two
    one.options["document"] = "mine"
    assert "document" not in two.options
    new = fast._original_create_md_parser(config, SphinxRenderer)
    assert dict(two.options) == dict(new.options)
    messages = []
    for po in sorted((ROOT / "locales").glob("*/LC_MESSAGES/**/*.po")):
        with po.open("rb") as handle:
            messages += [m.string for m in read_po(handle) if m.id and m.string]
    assert len(messages) > 1000
    for text in messages:
        assert [t.as_dict() for t in two.parse(text)] == [t.as_dict() for t in new.parse(text)]
    assert (
        myst_sphinx.create_md_parser is fast._original_create_md_parser
    )  # only setup() installs it


# ---- the patches of other packages (_ext/pins.py) ---------------------------


def test_each_patch_is_for_the_pinned_versions():
    """A pin that moves in constraints.txt fails here before any build: the
    patch must be checked against the new version first (_ext/pins.py)."""
    import re

    pins = _ext("pins")
    pinned = dict(
        re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "constraints.txt").read_text(), re.M)
    )
    pinned = {name.lower().replace("_", "-"): v for name, v in pinned.items()}
    for name, patch in pins.PATCHES.items():
        assert (ROOT / "_ext" / f"{name}.py").exists(), name
        assert f'check("{name}")' in (ROOT / "_ext" / f"{name}.py").read_text(), name
        drafts = re.findall(r"docs/upstream/\S+\.md", patch.upstream)
        assert drafts or "https://" in patch.upstream, f"{name} names no upstream issue"
        assert all((ROOT / draft).exists() for draft in drafts), drafts
        for dist, version in patch.versions.items():
            assert pinned[dist] == version, f"_ext/{name}.py is for {dist} {version}"
        assert pins.mismatches(name) == []  # and the venv has them


def test_a_moved_pin_stops_the_build_naming_the_patch(monkeypatch):
    import pytest
    from sphinx.errors import ExtensionError

    pins = _ext("pins")
    monkeypatch.setattr(pins, "version", lambda dist: "99.0")
    with pytest.raises(ExtensionError, match=r"_ext/msgstr_parsing\.py .* myst-parser 99\.0"):
        pins.check("msgstr_parsing")


def test_outputs_are_rendered_by_the_books_plugin():
    """MyST-NB finds the book's renderer by its entry point (pyproject.toml;
    `make venv` installs it), and _config.yml chooses it."""
    import sys

    from myst_nb.core.render import NbElementRenderer, load_renderer

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    name = config["sphinx"]["config"]["nb_render_plugin"]
    sys.path.insert(0, str(ROOT / "_ext"))  # as Jupyter Book does for local extensions
    try:
        renderer = load_renderer(name)
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    assert renderer.__name__ == "BookRenderer" and issubclass(renderer, NbElementRenderer)
    assert "render_error" in vars(renderer) and "render_mime_type" in vars(renderer)
    assert "render_error" not in vars(NbElementRenderer) or (
        NbElementRenderer.render_error.__module__ == "myst_nb.core.render"
    ), "myst-nb's own class is left as it is"


def test_bibliography_entries_become_list_items():
    fix = _ext("site_html").bibliography_roles
    body = (
        '<div class="citation-list" role="list">'
        '<div class="citation" id="id3" role="doc-biblioentry">[1]</div></div>'
    )
    assert 'id="id3" role="listitem"' in fix(body)
    other = '<div class="citation" id="id3" role="doc-biblioentry">'
    assert fix(other) == other  # only inside a bibliography


def test_a_folded_cells_toggle_is_named_by_its_visible_words():
    from types import SimpleNamespace

    from myst_nb.sphinx_ import HideCodeCellNode, visit_HideCellInput

    node = HideCodeCellNode(prompt_show="Show code cell source", prompt_hide="Hide")
    node["classes"] = ["above-input"]
    translator = SimpleNamespace(body=[])  # what visit_HideCellInput uses of Sphinx's
    visit_HideCellInput(translator, node)  # MyST-NB's own markup, as installed
    body = "".join(translator.body)
    fixed = _ext("site_html").folded_cell_names(body)
    assert "aria-label" in body and "aria-label" not in fixed, body
    assert fixed == body.replace(' aria-label="Toggle hidden content"', "")


def test_pybtex_finds_its_plugins_without_scanning_the_packages(monkeypatch):
    """sphinxcontrib-bibtex asks pybtex for a plugin once per citation; after
    _ext/book_zh.py registered the installed ones, no lookup scans entry points."""
    import pybtex.plugin

    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    book_zh = _ext("book_zh")
    book_zh.register_installed_pybtex_plugins()

    def scan(**kwargs):
        raise AssertionError(f"pybtex scanned the entry points for {kwargs}")

    monkeypatch.setattr(pybtex.plugin, "entry_points", scan)
    for group in book_zh.PYBTEX_GROUPS:
        assert pybtex.plugin.find_plugin(group) is not None  # the group's default
    assert pybtex.plugin.find_plugin("pybtex.backends", "plaintext").default_suffix == ".txt"


def test_chinese_references_use_full_width_separators_in_every_entrys_imprint(monkeypatch):
    """In the Chinese edition, unsrt's ", " and ". " become "，" and "。" in a
    sentence with Chinese and in the publisher-and-year or journal sentence
    and the locator of every entry, whatever its type and whether or not it
    has Chinese; names and titles keep theirs."""
    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    book_zh = _ext("book_zh")

    def full(text: str) -> str:
        return "".join(book_zh._full_width(text))

    assert full("Title. 会议论文集，第 308–318 页. ACM, 2016. doi:1") == (
        "Title. 会议论文集，第 308–318 页。ACM，2016。doi:1"
    )
    assert full("载于 A Book. Springer, Berlin, 2008.") == "载于 A Book。Springer，Berlin，2008。"
    assert full("Title. 载于 ICLR (ICLR 2022). 2022. arXiv:2110.05679.") == (
        "Title. 载于 ICLR (ICLR 2022)。2022。arXiv:2110.05679。"
    )
    assert full("载于 SysML (SysML). mlsys.org, 2018. mlsys.org/a.pdf（访问于 2026-11-26）.") == (
        "载于 SysML (SysML)。mlsys.org，2018。mlsys.org/a.pdf（访问于 2026-11-26）。"
    )
    assert full("Title. 讲义. see docs, 2018. x") == "Title. 讲义。see docs, 2018. x"
    english = "C. H. Bischof, H. M. Bücker. A title, with a comma. Springer, Berlin, 2008."
    assert full(english) == (
        "C. H. Bischof, H. M. Bücker. A title, with a comma. Springer，Berlin，2008。"
    )
    # a journal article punctuates as a book does, with or without Chinese
    assert full("U. Naumann. A Title. Mathematical Programming, 112(2):427–441, 2008. doi:1.") == (
        "U. Naumann. A Title. Mathematical Programming，112(2):427–441，2008。doi:1。"
    )
    assert full(
        "A. Baydin. A, b. J. of ML Research, 18(153):1–43, 2018. a.org（访问于 2026-11-25）."
    ) == ("A. Baydin. A, b. J. of ML Research，18(153):1–43，2018。a.org（访问于 2026-11-25）。")
    assert full("A. Meurer. SymPy. PeerJ Computer Science, 3:e103, 2017. doi:10.1016/0304-X.") == (
        "A. Meurer. SymPy. PeerJ Computer Science，3:e103，2017。doi:10.1016/0304-X。"
    )
    note = "Title, with a comma. 文档 (a, b), 2026."
    assert full(note) == "Title, with a comma. 文档 (a, b)，2026。"
    # Protected text keeps its ", ": an address, the list of editors
    kept = "MIT Press, Cambridge, MA, 第 4 版, 2022."
    mask = [False] * len(kept)
    mask[11:24] = [True] * 13  # "Cambridge, MA"
    assert "".join(book_zh._full_width(kept, mask)) == "MIT Press，Cambridge, MA，第 4 版，2022。"


def test_chinese_references_keep_editors_and_places_and_take_chinese_titles_and_code(monkeypatch):
    """The Chinese style on whole entries: the editors' names and a place
    such as "Cambridge, MA" keep their ", "; title_zh replaces a title; `...`
    in a Chinese field is code (<tt>, <code> on the page)."""
    from pybtex.database import Entry, Person

    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    monkeypatch.syspath_prepend(str(ROOT))
    style = _ext("book_zh")._chinese_style()()

    def render(entry, backend="text"):
        entry.key = "key"
        return style.format_entry("P1", entry).text.render_as(backend)

    chapter = Entry(
        "incollection",
        fields={
            "title": "{A Chapter}",
            "booktitle": "{A Book}",
            "pages": "35--44",
            "publisher": "MIT Press",
            "address": "Cambridge, MA",
            "year": "2008",
        },
        persons={
            "author": [Person("Giles, Mike B.")],
            "editor": [Person("Bischof, Christian H."), Person("Bücker, H. Martin")],
        },
    )
    assert render(chapter) == (
        "Mike B. Giles. A Chapter. 载于 Christian H. Bischof, H. Martin Bücker 编，"
        "A Book，第 35–44 页。MIT Press，Cambridge, MA，2008。"
    )
    source = Entry(
        "misc",
        fields={
            "title": "{a.py: the English description}",
            "title_zh": "{a.py：中文说明}",
            "howpublished": "Source code",
            "howpublished_zh": "源代码",
            "note": 'Raises "an error, quoted"',
            "note_zh": "报错：`an error, quoted`（一个错误）",
            "year": "2026",
        },
    )
    assert render(source) == "a.py：中文说明。源代码，2026。报错：an error, quoted（一个错误）。"
    assert "报错：<tt>an error, quoted</tt>（一个错误）。" in render(source, "html")


# ---- Sphinx started while the pages run (_ext/wait_for_pages.py) -----------


def test_sphinx_waits_only_when_asked(monkeypatch):
    import io

    import pytest

    ext = _ext("wait_for_pages")

    class App:
        def __init__(self):
            self.connected = []

        def connect(self, event, handler, priority=500):
            self.connected.append((event, handler, priority))

    monkeypatch.delenv(ext.VARIABLE, raising=False)
    assert (app := App()) and ext.setup(app) and app.connected == []
    monkeypatch.setenv(ext.VARIABLE, "1")
    ext.setup(app)
    assert app.connected == [("builder-inited", ext.wait, 900)]
    monkeypatch.setattr("sys.stdin", io.StringIO("go\n"))
    assert ext.wait(None) is None
    for said in ("", "stop\n"):  # the end of the input, or anything but go
        monkeypatch.setattr("sys.stdin", io.StringIO(said))
        with pytest.raises(SystemExit) as ended:
            ext.wait(None)
        assert ended.value.code == ext.CANCELLED


def test_a_cancelled_edition_loads_sphinx_and_builds_nothing(tmp_path, monkeypatch):
    """A real Sphinx process, started to wait and then cancelled: it got as far
    as waiting (status 3 comes only from there) and wrote no page."""
    from bookbuild import build_site

    monkeypatch.setenv("MATGRAD_BUILD_DIR", str(tmp_path))  # the child's _build
    monkeypatch.setattr(build_site, "BUILD", tmp_path)  # where the parent writes the log
    editions = build_site.Editions(["en"], fresh=True, wait=True)
    proc, log = editions.procs["en"]
    editions.cancel()
    assert proc.returncode == _ext("wait_for_pages").CANCELLED, log.read_text()
    assert not list(tmp_path.rglob("*.html")) and not list(tmp_path.rglob("*.doctree"))


def test_the_site_makes_its_extra_folders_before_sphinx_loads(tmp_path, monkeypatch):
    """On a fresh clone `make assets` has not run when Sphinx loads, and
    Sphinx drops an html_extra_path folder that does not exist (a warning,
    which fails the build): the site makes the folders first."""
    from bookbuild import build_site

    assert build_site.extra_paths() == [ROOT / "_build" / "assets"]
    (tmp_path / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    monkeypatch.setattr(build_site, "ROOT", tmp_path)
    monkeypatch.setattr(build_site, "Editions", lambda *args, **kwargs: None)
    build_site.Site(["en"], fresh=True)
    assert (tmp_path / "_build" / "assets").is_dir()

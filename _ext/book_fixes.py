"""Small Sphinx fixes for this book's site, so that a browser sees no errors
and axe-core (tests/test_a11y.py) finds nothing serious.

- Jupyter Book 1 loads sphinx-thebe even with thebe switched off, and its
  config script ends up on every page twice ("Identifier 'THEBE_JS_URL' has
  already been declared").  With thebe off, we drop its scripts and styles,
  which also removes the only reference to another host from the pages.
- Accessible names of the theme's header buttons (axe rule
  label-content-name-mismatch): the search button shows "Search Ctrl+K"
  but was named "Search", so its aria-label goes and its visible text names
  it; the colour-mode button's icons carried titles ("Light", "Dark", ...)
  that read as its text, so they become aria-hidden and the button keeps its
  name, "Color mode".
- The bibliography (sphinxcontrib-bibtex through docutils) is a
  ``role="list"`` whose entries have the deprecated ``doc-biblioentry``
  role, which a list may not contain (axe: aria-required-children,
  critical); the entries become ``listitem``.
- No top bar that holds only a second search field (pydata-sphinx-theme's
  ``navbar_persistent`` set empty; tests/test_header.py measures the
  header at 1280, 390 and 360 px in both editions).
- (Code blocks that scroll sideways need no fix here: pydata-sphinx-theme
  gives each one that overflows a tab stop, and re-checks 300 ms after a
  resize.)

The HTML fixes are applied to each page as the builder renders it.

(The theme's "Got invalid theme mode" console error is fixed in _config.yml,
by ``html_context: {default_mode: auto}``.)

For the Chinese edition (``language = zh_CN``, built by _ext/build_site.py):

- Every page links to the same page in the other edition (a button in the
  article header, and ``<link rel="alternate" hreflang>`` in the head). The
  English site is at the top of _build/html, the Chinese one at zh_CN/.
- A translated paragraph is parsed again on its own, as a small document
  that knows nothing of the page's notebook, so myst-nb's ``{glue:text}``
  found no glued value in it. Glue lookups that fail there fall back to the
  notebook of the page being read.
- Messages with no translation (missing from the catalog, empty or fuzzy)
  are collected just before Sphinx's Locale transform sees them, and the
  build writes them to ``untranslated.json`` beside the output folder; the
  tests fail on any.
- sphinx-exercise's titles ("Exercise 3 (A sandwich)") are not messages
  for Sphinx: gettext leaves them out and the Chinese page kept them in
  English. Each exercise's own title becomes a message here (a marker node
  that gettext extracts), and the Chinese build puts its translation in.
- Sphinx's Chinese search splits the text into words with jieba, whose
  dictionary cuts 雅可比矩阵 into 雅 / 可比 / 矩阵, so a search for 雅可比
  found nothing. The Chinese terms of the glossary's term table (and their
  parts) go into a jieba user dictionary (``html_search_options["dict"]``).
  jieba prints its progress through its own logger; it is quietened.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

# (pattern, replacement, how many matches a page must have at most): exact
# and narrow, so that a theme update that changes the markup is noticed by
# the accessibility test rather than silently half-fixed.
_SEARCH_FIELD = re.compile(
    r'(<button class="btn search-button-field search-button__button[^"]*" title="[^"]+") '
    r'aria-label="[^"]+"')
_THEME_ICON = re.compile(
    r'(<i class="theme-switch fa-solid [^"]*" data-mode="\w+")\s+title="[^"]*"')
_BIBLIOENTRY = re.compile(r'(<div class="citation" id="[^"]+") role="doc-biblioentry"')


def fix_html(html: str) -> str:
    html = _SEARCH_FIELD.sub(r"\1", html)
    html = _THEME_ICON.sub(r'\1 aria-hidden="true"', html)
    if 'class="citation-list"' in html:
        html = _BIBLIOENTRY.sub(r'\1 role="listitem"', html)
    return html


def _is_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", "") or "")
    return "thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree):
    if app.config.html_theme_options.get("launch_buttons", {}).get("thebe"):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe(a)]


def _fix_rendered_pages(app):
    """Wrap the HTML builder's template rendering with ``fix_html``."""
    templates = getattr(app.builder, "templates", None)
    if app.builder.format != "html" or templates is None:
        return
    render = templates.render

    def render_fixed(template, context):
        return fix_html(render(template, context))

    templates.render = render_fixed


# ---- the two editions ---------------------------------------------------

TEMPLATES = Path(__file__).parent / "templates"
# The other edition of a page, relative to the page (English at the top of
# the site, Chinese under zh_CN/).
EDITION_LINKS = {
    "en": {"lang": "zh-CN", "label": "中文", "short": "中文", "title": "阅读本页的中文版",
           "prefix": "zh_CN/", "up": 0},
    "zh_CN": {"lang": "en", "label": "English", "short": "EN", "title": "Read this page in English",
              "prefix": "", "up": 1},
}


# ---- the whole book as PDF (`make pdf`, bookbuild/pdf.py) ----------------

# `make pdf` writes these; the English site serves them at its top, and the
# index page of both editions links them, below its title, only when both
# exist at the time the site is built: `make pdf` writes the index pages
# again after printing, and `make book` removes the PDFs when the site
# changes, so a PDF is never older than the pages that link to it.
PDF_DIR = Path(__file__).resolve().parents[1] / "_build" / "pdf"
PDF_FILES = {"en": "matgrad-en.pdf", "zh_CN": "matgrad-zh_CN.pdf"}
PDF_NOTE = {  # per edition: the note's words, and the PDFs (its own first)
    "en": ("The whole book as one PDF:", [("en", "en", "English"), ("zh_CN", "zh-CN", "中文")]),
    "zh_CN": ("全书 PDF：", [("zh_CN", "zh-CN", "中文"), ("en", "en", "English")]),
}


def built_pdfs() -> bool:
    return all((PDF_DIR / name).is_file() for name in PDF_FILES.values())


def _pdf_links(app, pagename, templatename, context, doctree):
    """Below the index page's title: links to the book's PDFs (when built)."""
    edition = "en" if _is_english(app.config) else app.config.language
    if (not app.config.html_context.get("matgrad_pdfs") or app.builder.name != "html"
            or pagename != app.config.root_doc or edition not in PDF_NOTE
            or "</h1>" not in context.get("body", "")):
        return
    up = "../" * EDITION_LINKS[edition]["up"]
    words, pdfs = PDF_NOTE[edition]
    links = " · ".join(
        f'<a href="{up}{PDF_FILES[pdf]}" hreflang="{lang}" lang="{lang}" '
        f'type="application/pdf">{label}</a>' for pdf, lang, label in pdfs)
    note = (f'<p class="matgrad-book-pdfs"><i class="fa-solid fa-file-pdf" aria-hidden="true">'
            f'</i> {words} {links}</p>')
    context["body"] = context["body"].replace("</h1>", "</h1>\n" + note, 1)


def _is_english(config) -> bool:
    return (config.language or "en") == "en"


def _configure(app, config):
    # First: the book's copies of theme components (_ext/book_zh.py) replace the
    # themes' own, which the themes put on templates_path when they are set up.
    config.templates_path = [str(TEMPLATES), *config.templates_path]
    # pydata-sphinx-theme >= 0.16 fills its top navbar with a search field
    # when navbar_persistent is not set (pydata_sphinx_theme/__init__.py).
    # sphinx-book-theme sets every other navbar slot empty, so the bar held
    # nothing but a second search field (the sidebar has one; below 992 px
    # the article header has a search button). An empty list drops the bar.
    config.html_theme_options.setdefault("navbar_persistent", [])
    # Whether the book's PDFs exist: a configuration value of the HTML
    # builder, so that pages are written again when they appear or go.
    config.html_context = {**config.html_context, "matgrad_pdfs": built_pdfs()}
    if built_pdfs() and _is_english(config):
        config.html_extra_path = [*config.html_extra_path, str(PDF_DIR)]
    header = config.html_theme_options.setdefault(
        "article_header_end", ["article-header-buttons.html"])
    if isinstance(header, str):
        header = [h.strip() for h in header.split(",") if h.strip()]
    config.html_theme_options["article_header_end"] = ["language-switch.html", *header]
    if not _is_english(config):
        _patch_glue()
        try:
            import jieba
            jieba.setLogLevel(logging.WARNING)
        except ImportError:  # pragma: no cover - pinned in requirements-dev.txt
            pass
        words = Path(app.outdir).parent / "search-words.txt"
        words.write_text("".join(f"{w} 1000 n\n" for w in search_words(app.srcdir)), "utf8")
        config.html_search_options = {**(config.html_search_options or {}),
                                      "dict": str(words)}


def term_table(srcdir) -> list[tuple[str, str]]:
    """(English, Chinese) rows of the glossary's term table, parentheses dropped.

    An English word with two senses has two rows (e.g. *Jacobian*: 雅可比矩阵
    when flattened, 雅可比张量 when not), told apart in parentheses."""
    text = (Path(srcdir) / "appendix" / "glossary.md").read_text("utf8")
    rows = []
    for line in text[text.index("(glossary-zh-terms)="):].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and re.search(r"[\u4e00-\u9fff]", cells[1]) \
                and cells[0] not in ("English", "英文"):
            rows.append((re.sub(r"\s*\(.*\)", "", cells[0]).strip("*"),
                         re.sub(r"\s*[(（].*[)）]", "", cells[1])))
    return rows


def search_words(srcdir) -> list[str]:
    """The Chinese terms and their parts, as words for jieba."""
    words = set()
    for _, chinese in term_table(srcdir):
        words.add(chinese)
        words.update(p for p in re.split(r"[-\s]", chinese) if len(p) > 1)
        if chinese.endswith("矩阵") and len(chinese) > 3:
            words.add(chinese[:-2])  # 雅可比 of 雅可比矩阵
    return sorted(words)


def _edition_link(app, pagename, templatename, context, doctree):
    edition = "en" if _is_english(app.config) else app.config.language
    link = EDITION_LINKS.get(edition)
    if link is None:
        return
    up = "../" * (pagename.count("/") + link["up"])
    href = f"{up}{link['prefix']}{pagename}.html"
    context["matgrad_other_edition"] = {**link, "href": href}
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{link["lang"]}" href="{href}" />')


def _patch_glue():
    """Glue lookups from a translated paragraph read the page's glued values.

    myst-nb writes a page's glued values to ``<page>.glue.json`` in its output
    folder while it parses the page, before Sphinx's Locale transform parses
    the translated paragraphs; only ``{glue:text}`` (text/plain) is used in
    this book's prose.
    """
    from myst_nb.ext.glue import directives, roles, utils

    if getattr(utils.retrieve_glue_data, "matgrad_fallback", False):
        return
    original = utils.retrieve_glue_data

    def retrieve_glue_data(document, key):
        try:
            return original(document, key)
        except utils.RetrievalError:
            env = getattr(document.settings, "env", None)
            if env is None or "nb_renderer" in document:
                raise
            path = Path(env.mystnb_config.output_folder, f"{env.docname}.glue.json")
            glued = json.loads(path.read_text("utf8")) if path.exists() else {}
            if key not in glued:
                raise
            return utils.VariableOutput(data=glued[key]["data"],
                                        metadata=glued[key].get("metadata", {}),
                                        nb_renderer=None, vtype="glue")

    retrieve_glue_data.matgrad_fallback = True
    for module in (utils, roles, directives):
        module.retrieve_glue_data = retrieve_glue_data


def _catalog(env, docname) -> dict[str, str]:
    from sphinx.locale import init as init_locale

    dirs = [str(Path(env.srcdir) / d) for d in env.config.locale_dirs]
    domain = docname_to_domain(docname, env.config.gettext_compact)
    catalog, found = init_locale(dirs, env.config.language, domain)
    merged: dict[str, str] = {}
    while found and catalog is not None:
        merged = {**getattr(catalog, "_catalog", {}), **merged}
        catalog = catalog._fallback
    return merged


class exercise_title_message(nodes.Element, addnodes.translatable):
    """The text of an exercise's title, as a message (never rendered)."""

    def extract_original_messages(self):
        return [self["original"]]

    def apply_translated_message(self, original_message, translated_message):
        if original_message == self["original"]:
            self["translated"] = translated_message


def _exercise_subtitles(document):
    return [node for node in document.findall(nodes.subtitle)
            if type(node).__name__ == "exercise_subtitle"]


class ExerciseTitleMessages(SphinxTransform):
    """Put a message marker beside each exercise title (before Locale, 20)."""

    default_priority = 18

    def apply(self, **kwargs):
        if str(self.document.get("source", "")).endswith("<translated>"):
            return
        for subtitle in _exercise_subtitles(self.document):
            marker = exercise_title_message(original=subtitle.astext())
            marker.source, marker.line = subtitle.source, subtitle.line
            # beside the exercise, not in it: sphinx-exercise rebuilds its
            # nodes after reading
            exercise = subtitle.parent.parent
            exercise.parent.insert(exercise.parent.index(exercise) + 1, marker)


class ExerciseTitleTranslations(SphinxTransform):
    """Use the translated exercise titles and drop the markers (after Locale).

    The gettext builder keeps the markers, which is how it extracts them."""

    default_priority = 21

    def apply(self, **kwargs):
        if self.app.builder.name == "gettext":
            return
        for marker in list(self.document.findall(exercise_title_message)):
            translated = marker.get("translated")
            exercise = marker.parent[marker.parent.index(marker) - 1]
            if translated:
                # the page's exercise, and sphinx-exercise's copy of it, from
                # which it titles the solution ("Solution to Exercise 3 (...)")
                copies = [entry["node"] for entry in
                          getattr(self.env, "sphinx_exercise_registry", {}).values()
                          if entry.get("docname") == self.env.docname]
                for node in [exercise, *copies]:
                    for subtitle in node.findall(nodes.subtitle):
                        if subtitle.astext() == marker["original"]:
                            subtitle.children = []
                            subtitle += nodes.Text(translated)
            marker.parent.remove(marker)


def _skip(self, node):
    raise nodes.SkipNode


class TranslationCheck(SphinxTransform):
    """Note the page's untranslated messages.

    Runs on every page just before Sphinx's Locale transform (priority 20),
    which looks up the same messages in the same catalog.
    """

    default_priority = 19

    def apply(self, **kwargs):
        if _is_english(self.config) or str(self.document.get("source", "")).endswith(
                "<translated>"):
            return  # the English edition, or a translated paragraph being parsed
        catalog = _catalog(self.env, self.env.docname)
        # (The front matter, still a field list at the top of the document
        # here, is never shown: it becomes docinfo, which Sphinx keeps as page
        # metadata and drops from the page.)
        # (sphinx-exercise titles its exercises and solutions itself, in the
        # page's language; an exercise's own title is a message of its own,
        # see ExerciseTitleMessages.)
        missing = [msg for node, msg in extract_messages(self.document)
                   if not catalog.get(msg, "").strip()
                   and not _in_front_matter(node)
                   and type(node).__name__ not in ("exercise_title", "solution_title")]
        store = getattr(self.env, "matgrad_untranslated", {})
        store[self.env.docname] = sorted(set(missing))
        self.env.matgrad_untranslated = store


class TranslateToctrees(SphinxTransform):
    """Translate the captions of the toctrees that _toc.yml makes.

    sphinx-external-toc inserts them at priority 100, after the Locale
    transform (20) has translated the rest of the page, so their captions
    ("Chapters", ...) would stay in English; the gettext builder, which reads
    the finished page, does extract them.
    """

    default_priority = 101

    def apply(self, **kwargs):
        if _is_english(self.config):
            return
        from sphinx import addnodes

        catalog = _catalog(self.env, self.env.docname)
        store = getattr(self.env, "matgrad_untranslated", {})
        for toctree in self.document.findall(addnodes.toctree):
            for msg in toctree.extract_original_messages():
                if catalog.get(msg, "").strip():
                    toctree.apply_translated_message(msg, catalog[msg])
                else:
                    store.setdefault(self.env.docname, []).append(msg)
        self.env.matgrad_untranslated = store


def _in_front_matter(node) -> bool:
    while node is not None:
        if isinstance(node, nodes.docinfo) or (
                isinstance(node, nodes.field_list) and isinstance(node.parent, nodes.document)):
            return True
        node = node.parent
    return False


def _purge(app, env, docname):
    getattr(env, "matgrad_untranslated", {}).pop(docname, None)


def _merge(app, env, docnames, other):
    store = getattr(env, "matgrad_untranslated", {})
    for docname in docnames:
        if docname in getattr(other, "matgrad_untranslated", {}):
            store[docname] = other.matgrad_untranslated[docname]
    env.matgrad_untranslated = store


def _write_untranslated(app, exception):
    if exception is not None or _is_english(app.config) or app.builder.format != "html":
        return
    store = getattr(app.env, "matgrad_untranslated", {})
    report = {doc: msgs for doc, msgs in sorted(store.items())
              if msgs and doc in app.env.found_docs}
    path = Path(app.outdir).parent / "untranslated.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf8")


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("html-page-context", _edition_link)
    app.connect("html-page-context", _pdf_links, priority=600)  # after the theme's 501
    app.connect("builder-inited", _fix_rendered_pages)
    app.add_node(exercise_title_message, html=(_skip, None), latex=(_skip, None),
                 text=(_skip, None))
    app.add_transform(ExerciseTitleMessages)
    app.add_transform(TranslationCheck)
    app.add_transform(ExerciseTitleTranslations)
    app.add_transform(TranslateToctrees)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write_untranslated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The Chinese edition's own parts that are not page text: the theme's
interface and the references. (Figures and tables in Chinese are rendered by
the book's MyST-NB renderer, _ext/cell_outputs.py.)

- Interface strings. The themes' words on every page (the sidebar buttons,
  "Print to PDF", "Launch on", the search field's "Search this book..." ...) are
  messages of Sphinx's "sphinx" catalog: the book translates them in
  locales/zh_CN/LC_MESSAGES/sphinx.po, which Sphinx finds through
  ``locale_dirs`` and puts before its own and the themes' translations.
  The launch buttons' tooltips are built as "Launch on" + " Binder", in
  English word order; a translation of "Launch on %s" in sphinx.po writes
  them whole (在 Binder 上启动).
  ``make translations`` keeps that catalog up to date like a page's: the
  messages are the ``_()`` calls of _ext/templates (the book's copies of the
  theme's components whose words were not translatable, and
  theme-messages.html, the list of the themes' own messages the book
  translates). sphinx-book-theme looks its words up in its own catalog
  ("booktheme"), where some are missing or in traditional wording
  (列印成 PDF); the book's catalog is put first there too, a patch of
  Sphinx's registry of catalogs (guarded in _ext/pins.py).
- References. Both editions format the bibliography with the book's own
  pybtex styles. ``matgrad`` (English) is sphinxcontrib-bibtex's ``unsrt``
  with each link shown as its address without "https://": the theme shortens
  a GitHub link whose text is its address to "owner/repo", which hides the
  file or issue it points to. ``matgrad_zh`` (Chinese) is ``matgrad`` with the
  book's own words in Chinese (``note_zh`` and ``howpublished_zh`` of
  appendix/references.bib, which every note and howpublished has, and
  ``title_zh``, the Chinese of a title that is the book's own description, as
  of a source file; in these, `...` is code: an error message or a label
  quoted verbatim), no "and" between authors, "第 N 版" for an edition (the
  .bib writes it as a word, "Third"), "访问于" for the date a link was
  visited, no "URL:" before a link, and "载于 …… 编，……第 N 卷，第 a–b 页"
  for a chapter of a book or a paper in proceedings. Published titles,
  authors, publishers and links stay as published (the titles are braced in
  the .bib, so that no style changes their case).
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

from editions import is_english


class _BookFirst(gettext.NullTranslations):
    """A theme's catalog, with the book's translations (sphinx.po) first."""

    def __init__(self, book: dict[str, str], theme):
        super().__init__()
        self.book = book
        if theme is not None:
            self.add_fallback(theme)

    def gettext(self, message):
        if self.book.get(message):
            return self.book[message]
        return self._fallback.gettext(message) if self._fallback else message


def _book_messages(app) -> dict[str, str]:
    from babel.messages.pofile import read_po

    found = {}
    for folder in app.config.locale_dirs:
        path = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES", "sphinx.po")
        if path.exists():
            with path.open("rb") as handle:
                for message in read_po(handle):
                    if message.id and message.string and not message.fuzzy:
                        found[message.id] = message.string
    return found


def _book_first_in_theme_catalogs(app):
    if is_english(app.config):
        return
    from sphinx import locale

    book = _book_messages(app)
    for (namespace, catalog), translator in list(locale.translators.items()):
        if catalog == "booktheme":
            locale.translators[namespace, catalog] = _BookFirst(book, translator)


# How the .bib writes an edition, and its number for "第 N 版".
_EDITIONS = {"First": "1", "Second": "2", "Third": "3", "Fourth": "4", "Fifth": "5"}


def _shown_address(url: str) -> str:
    """A link's text: its address without the scheme (see the module's docstring)."""
    return re.sub(r"^https?://", "", url)


def _english_style():
    from pybtex.style.formatting.unsrt import Style
    from pybtex.style.template import field, href, words

    class EnglishStyle(Style):
        """unsrt, with each link shown as its address (see the module's docstring)."""

        def format_url(self, e):
            url = field("url", raw=True)
            shown = field("url", raw=True, apply_func=_shown_address)
            return words["URL:", href(url)[shown]]

        def format_entry(self, label, entry, bib_data=None):
            formatted = super().format_entry(label, entry, bib_data)
            _link_addresses(formatted.text)
            return formatted

    return EnglishStyle


# An address in a note: up to a space or a separator ("; ", "；"); not its sentence's final ".".
_ADDRESS = re.compile(r"https?://[^\s;,；，（）()]+?(?=\.?(?:[\s;,；，（）()]|$))")


def _link_addresses(text) -> None:
    """Each address written in a note (a second wheel, a licence) becomes a
    link shown as its address, as the url field is. Changes the rich text in place."""
    from pybtex.richtext import HRef, String, Text

    for parent, index, part, _ in _leaves(text):
        linkable = isinstance(part, String) and not isinstance(parent, HRef)
        if linkable and _ADDRESS.search(part.value):
            pieces, at = [], 0
            for match in _ADDRESS.finditer(part.value):
                pieces += [part.value[at : match.start()], HRef(match[0], _shown_address(match[0]))]
                at = match.end()
            parent.parts[index] = Text(*(piece for piece in [*pieces, part.value[at:]] if piece))


def _chinese_collections():
    """A chapter of a book and a paper in proceedings, in Chinese: "载于
    <editors> 编，<book>，<series> 第 N 卷，第 a–b 页" where unsrt writes "In
    <editors>, editors, <book>, volume N of <series>, pages a–b"."""
    from pybtex.richtext import Protected
    from pybtex.style.formatting import toplevel
    from pybtex.style.formatting.unsrt import date, pages
    from pybtex.style.template import (
        _format_list,
        field,
        first_of,
        join,
        node,
        optional,
        optional_field,
        sentence,
        words,
    )

    @node
    def kept(children, data):
        """Its text as it is: Protected, which _full_width_separators leaves alone."""
        return Protected(*_format_list(children, data))

    class Collections:
        def format_editor(self, e, as_sentence=True):
            # the names keep their ", " (as the authors' do): see _full_width_separators
            editors = join[kept[self.format_names("editor", as_sentence=False)], " 编"]
            return sentence[editors] if as_sentence else editors

        def format_volume_and_series(self, e, as_sentence=True):
            volume = join["第 ", field("volume"), " 卷"]
            return first_of[
                optional[join[field("series"), " ", volume]],
                optional[volume],
                optional_field("series"),
            ]

        def format_chapter_and_pages(self, e):
            return optional[join["第 ", pages, " 页"]]

        def _in_book(self, e, *after):
            """载于 (in) the book or proceedings: editors, title, volume, pages."""
            book = sentence[
                optional[self.format_editor(e, as_sentence=False)],
                self.format_btitle(e, "booktitle", as_sentence=False),
                self.format_volume_and_series(e, as_sentence=False),
                self.format_chapter_and_pages(e),
            ]
            return words[("载于", book, *after)]

        def get_incollection_template(self, e):
            return toplevel[
                sentence[self.format_names("author")],
                self.format_title(e, "title"),
                self._in_book(e),
                sentence[
                    optional_field("publisher"),
                    optional_field("address"),
                    self.format_edition(e),
                    date,
                ],
                self.format_web_refs(e),
            ]

        def get_inproceedings_template(self, e):
            return toplevel[
                sentence[self.format_names("author")],
                self.format_title(e, "title"),
                self._in_book(e, self.format_address_organization_publisher_date(e)),
                sentence[optional_field("note")],
                self.format_web_refs(e),
            ]

    return Collections


def _chinese_style():
    from pybtex.database import Entry
    from pybtex.style.template import field, href, join, names, optional, sentence

    class ChineseStyle(_chinese_collections(), _english_style()):
        """matgrad, with the book's own words in Chinese (see the module's docstring)."""

        def format_names(self, role, as_sentence=True):
            formatted = names(role, sep=", ", sep2=", ", last_sep=", ")
            return sentence[formatted] if as_sentence else formatted

        def format_edition(self, e):
            number = field("edition", raw=True, apply_func=lambda x: _EDITIONS.get(x, x))
            return optional[join["第 ", number, " 版"]]

        def format_url(self, e):
            url = field("url", raw=True)
            return href(url)[field("url", raw=True, apply_func=_shown_address)]

        def format_web_refs(self, e):
            return sentence[
                optional[self.format_url(e), optional["（访问于 ", field("urldate"), "）"]],
                optional[self.format_eprint(e)],
                optional[self.format_pubmed(e)],
                optional[self.format_doi(e)],
            ]

        def format_entry(self, label, entry, bib_data=None):
            fields = type(entry.fields)(entry.fields)
            for name in ("note", "howpublished"):
                if name in fields:
                    chinese = fields.get(name + "_zh")
                    if not chinese:
                        raise ValueError(
                            f"appendix/references.bib: {entry.key} has a {name} "
                            f"but no {name}_zh, its Chinese for the Chinese edition"
                        )
                    fields[name] = chinese
            if fields.get("title_zh"):
                fields["title"] = fields["title_zh"]
            if fields.get("address"):
                # one place ("Cambridge, MA"): braced, it keeps its ", "
                fields["address"] = "{" + fields["address"] + "}"
            chinese_entry = Entry(entry.type, fields=fields, persons=entry.persons)
            chinese_entry.key = entry.key
            formatted = super().format_entry(label, chinese_entry, bib_data)
            _code_spans(formatted.text)
            _full_width_separators(formatted.text)
            return formatted

    return ChineseStyle


_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# Where unsrt ends a sentence: "." (or a title's own "?" / "!") and a space, or the end;
# not the full stop of an initial ("Christian H. Bischof", an editor), but the
# entry's last stop even after a capital ("doi:10.1016/0304-3975(83)90110-X.").
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])[.?!] |[.?!]$")
# A sentence of publisher, place and year alone ("Springer, Berlin, 2008"), or
# of a journal, its volume and pages and the year: in every entry, whatever its
# type, its separators are full width, as in a sentence with Chinese. A name
# starts with a capital, or is a lower-case domain name ("mlsys.org").
_NAME = r"(?:[A-Z][\w&.-]*|[a-z][\w-]*(?:\.[a-z][\w-]*)+)(?: [\w&.-]+)*"
# unsrt's volume, number and pages of an article: "112(2):427–441", "3:e103",
# "pages 1–10".
_VOLUME_PAGES = r"(?:\d+(?:\([^()]*\))?(?::[\w–-]+)?|pages [\w–-]+)"
# "ACM, 2016", "mlsys.org, 2018", "Springer, Berlin, 2008", the year alone
# (proceedings with no publisher), "Mathematical Programming, 112(2):427–441, 2008";
# and a sentence of a locator alone ("ISBN …", "doi:…", "arXiv:…"), whose "." becomes "。".
_PUBLISHER_YEAR = re.compile(
    rf"(?:{_NAME}(?:, {_NAME})*, )?\d{{4}}|{_NAME}, {_VOLUME_PAGES}, \d{{4}}"
    r"|(?:ISBN |doi:|arXiv:)\S+"
)


def _full_width_separators(text) -> None:
    """unsrt joins an entry's fields with ", " and ends each sentence with
    "." and a ``newblock`` (a space); after the Chinese note_zh /
    howpublished_zh that reads "文档, 2026. 询问……". In a sentence that
    contains Chinese, and in any entry's sentence of publisher, place and
    year (or of the year alone), of journal, volume, pages and year, or of a
    locator (doi, ISBN, arXiv), those separators become "，" and "。" (no
    space after it), whether or not the entry has Chinese; a
    comma inside brackets (code in a note) and every other sentence without
    Chinese (names, titles, links) stay as they are, and so does all
    Protected text (a braced field: a title, an address such as "Cambridge,
    MA"; a list of editors, whose names are separated by ", " like the
    authors') and code. Changes the rich text in place."""
    from pybtex.richtext import String

    leaves = _leaves(text)
    whole = "".join(_shown(part) for _, _, part, _ in leaves)
    kept = [keep for _, _, part, keep in leaves for _ in _shown(part)]
    out = _full_width(whole, kept)
    i = 0
    for parent, index, part, _ in leaves:
        n = len(_shown(part))
        new = "".join(out[i : i + n])
        if isinstance(part, String):
            part.value = new
        elif new != _shown(part):
            parent.parts[index] = String(new)
        i += n


def _code_spans(text) -> None:
    """Each `...` of the Chinese fields (an error message or a label, quoted
    verbatim) becomes code, as on the pages (a ``tt`` tag: <code>). Changes
    the rich text in place."""
    from pybtex.richtext import String, Tag, Text

    for parent, index, part, _ in _leaves(text):
        if isinstance(part, String) and "`" in part.value:
            pieces = part.value.split("`")
            if len(pieces) % 2 == 0:
                raise ValueError(f"appendix/references.bib: an unpaired ` in {part.value!r}")
            parent.parts[index] = Text(
                *(Tag("tt", piece) if odd else piece for odd, piece in _alternate(pieces) if piece)
            )


def _alternate(pieces):
    return ((i % 2 == 1, piece) for i, piece in enumerate(pieces))


def _leaves(node, kept: bool = False) -> list:
    """(parent, index in parent.parts, part, inside Protected text) of each
    string and symbol of rich text."""
    from pybtex.richtext import Protected, String, Symbol

    kept = kept or isinstance(node, Protected) or getattr(node, "name", None) == "tt"
    found = []
    for index, part in enumerate(getattr(node, "parts", ())):
        if isinstance(part, (String, Symbol)):
            found.append((node, index, part, kept))
        else:
            found += _leaves(part, kept)
    return found


def _shown(part) -> str:
    from pybtex.richtext import String

    if isinstance(part, String):
        return part.value
    return " " if part.name == "newblock" else "\u00a0"  # nbsp, dashes: no separator


def _full_width(whole: str, kept: list[bool] | None = None) -> list[str]:
    """What each character of ``whole`` becomes (see _full_width_separators);
    ``kept``: the characters of Protected text, which stay as they are."""
    out = list(whole)
    kept = kept or [False] * len(whole)
    start = 0
    for end in [*_SENTENCE_END.finditer(whole), None]:
        stop = end.start() if end else len(whole)
        sentence = whole[start:stop]
        imprint = _PUBLISHER_YEAR.fullmatch(sentence)
        if _CJK.search(sentence) or imprint:
            _full_width_commas(whole, out, start, stop, kept)
            if end and whole[end.start()] == "." and not kept[end.start()]:
                out[end.start()] = "。"
                if end.end() > end.start() + 1:
                    out[end.start() + 1] = ""
        if end is None:
            break
        start = end.end()
    return out


def _full_width_commas(whole: str, out: list[str], start: int, stop: int, kept: list[bool]) -> None:
    depth = 0  # inside brackets: code in a note
    for i in range(start, stop):
        depth += whole[i] in "([（［"
        depth -= whole[i] in ")]）］"
        if whole[i : i + 2] == ", " and depth == 0 and not kept[i]:
            out[i], out[i + 1] = "，", ""


#: The pybtex plugin groups that sphinxcontrib-bibtex looks plugins up in.
PYBTEX_GROUPS = (
    "pybtex.backends",
    "pybtex.style.formatting",
    "pybtex.style.labels",
    "pybtex.style.names",
    "pybtex.style.sorting",
)


def register_installed_pybtex_plugins() -> None:
    """Register pybtex's installed plugins at run time (pybtex's own
    ``register_plugin``). pybtex looks a plugin up among those first; any other
    it finds by scanning the entry points of every installed package, and
    sphinxcontrib-bibtex asks for the plain-text backend once per citation:
    about a tenth of a build's time went to those scans."""
    from importlib.metadata import entry_points

    from pybtex.plugin import register_plugin

    for group in PYBTEX_GROUPS:
        for point in entry_points(group=group):
            register_plugin(group, point.name, point.load(), force=True)


def _references_style(app, config):
    from pybtex.plugin import register_plugin

    register_installed_pybtex_plugins()
    if is_english(config):
        register_plugin("pybtex.style.formatting", "matgrad", _english_style(), force=True)
        config.bibtex_default_style = "matgrad"
    else:
        register_plugin("pybtex.style.formatting", "matgrad_zh", _chinese_style(), force=True)
        config.bibtex_default_style = "matgrad_zh"


def _search_bar_text(app, config):
    """The search field's placeholder is a theme option (Jupyter Book sets
    "Search this book..."), shown as is: give it its translation."""
    if is_english(config):
        return
    options = config.html_theme_options
    options["search_bar_text"] = app.translator.gettext(
        options.get("search_bar_text", "Search this book...")
    )


# The launch buttons' tooltips: sphinx-book-theme writes them as
# translation("Launch on") + " Binder", an English word order; a translation
# of the whole, "Launch on %s" (sphinx.po), puts the place where it belongs.
LAUNCH_ON = "Launch on %s"


def _launch_tooltips(app, pagename, templatename, context, doctree):
    pattern = app.translator.gettext(LAUNCH_ON)
    if pattern == LAUNCH_ON:
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            for button in group.get("buttons", []):
                if button.get("text"):
                    button["tooltip"] = pattern % button["text"]


def setup(app):
    from pins import check

    check("book_zh")  # _book_first_in_theme_catalogs
    app.connect("config-inited", _search_bar_text)
    app.connect("config-inited", _references_style)
    app.connect("builder-inited", _book_first_in_theme_catalogs)
    # after sphinx-book-theme's add_launch_buttons (501)
    app.connect("html-page-context", _launch_tooltips, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The book's editions, one row each: what the build (build_site.py,
pipeline.py, pages.py), the Sphinx extensions (_ext/editions.py) and the PDF
know about a language.

The first edition is the source, English, published at the top of the site;
each other one is a translation, built in ``_build/<folder>/`` from the
catalogs in ``locales/<language>/LC_MESSAGES/`` and published in the English
site at ``<folder>/``. Adding a language is a row here and its catalogs in
locales/ (``make translations`` after adding the language to bookbuild's
``translations`` command makes them). The words of the Sphinx interface
(buttons, tooltips) are not here: they are messages of each language's
sphinx.po.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edition:
    language: str  # Sphinx's ``language``; the catalogs are locales/<language>/
    hreflang: str  # BCP 47, for ``lang`` and ``hreflang`` attributes
    name: str  # the language's own name: the other editions' link to this one
    short: str  # the same, on a phone
    read_here: str  # that link's tooltip, in this language
    folder: str  # in the site and under _build/; "" for the source edition
    # The cover: the book's title and authors (None: _config.yml's), and the
    # PDF's words for the edition and its table of contents.
    title: str | None
    author: str | None
    edition_words: str
    contents: str
    pdf_note: str  # before the links to the PDFs on the index page
    # The site's footer and the PDF's title page: {version}, {date}, and the
    # links {text_licence} and {code_licence} (HTML).
    footer: str
    # The toggle of a folded code cell (tag hide-input), shown and hidden:
    # MyST-NB takes these words from its configuration, not from a catalog.
    # None: MyST-NB's own ("Show code cell source").
    code_toggle: tuple[str, str] | None = None


EDITIONS = (
    Edition(
        language="en",
        hreflang="en",
        name="English",
        short="EN",
        read_here="Read this page in English",
        folder="",
        title=None,
        author=None,
        edition_words="English edition",
        contents="Contents",
        pdf_note="The whole book as one PDF:",
        footer=(
            "Version {version}, built {date}. Text and figures: {text_licence}; "
            "code: {code_licence}."
        ),
    ),
    Edition(
        language="zh_CN",
        hreflang="zh-CN",
        name="中文",
        short="中文",
        read_here="阅读本页的中文版",
        folder="zh_CN",
        title="矩阵的梯度",
        author="matgrad 编写组",
        edition_words="中文版",
        contents="目录",
        pdf_note="全书 PDF：",
        footer=(
            "版本 {version}，构建于 {date}。"
            "文字与图片采用 {text_licence} 许可，代码采用 {code_licence} 许可。"
        ),
        code_toggle=("显示代码", "隐藏代码"),
    ),
)
SOURCE = EDITIONS[0]
LANGUAGES = tuple(e.language for e in EDITIONS)
# The translations' folders in the site: ``zh_CN/chapters/04_vjp.html``.
TRANSLATIONS = tuple(e.folder for e in EDITIONS[1:])


def edition(language: str | None) -> Edition:
    """The edition of ``language`` (None: the source's)."""
    for row in EDITIONS:
        if row.language == (language or SOURCE.language):
            return row
    raise ValueError(f"no edition in bookbuild/editions.py has language {language!r}")


def sphinx_overrides(row: Edition) -> dict[str, str]:
    """What the edition's Sphinx build changes in _config.yml."""
    if row is SOURCE:
        return {}
    cover = {"html_title": row.title, "project": row.title, "author": row.author}
    return {"language": row.language, **{k: v for k, v in cover.items() if v}}


def relative_link(pagename: str, source: Edition, target: Edition) -> str:
    """From page ``pagename`` of ``source`` to the same page of ``target``, relative."""
    up = "../" * (pagename.count("/") + (1 if source.folder else 0))
    return f"{up}{target.folder + '/' if target.folder else ''}{pagename}.html"


def footer(row: Edition, version: str, date: str, repository: str) -> str:
    """The footer's HTML in ``row``'s language: version, build date, licences."""
    licences = f"{repository.rstrip('/')}/blob/main"
    return row.footer.format(
        version=version,
        date=date,
        text_licence=f'<a href="{licences}/LICENSE-TEXT">CC BY 4.0</a>',
        code_licence=f'<a href="{licences}/LICENSE">MIT</a>',
    )

"""The two editions are the same book, element for element.

For every page, the Chinese page is compared with the English one as built:
the same display formulas (the same TeX outside ``\\text{...}``, none empty or
reduced to ``::``), the same inline formulas, the same code cells with the
same kinds of output, figures, tables of the same shape, admonitions and
dropdowns, exercises and solutions, links to the same targets, and as many
back-links from each bibliography entry, each to a citation on the page. The first
difference fails the test, naming the page and the element.

A translation can only change words: a catalog entry that turns a formula
into ``::`` (as four did before ``_ext/translated_math.py``), drops a table
row or loses a link fails here, although every message is translated.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from conftest import HTML, toc_pages

ZH = HTML / "zh_CN"
TEXT = re.compile(r"\\text\{[^{}]*\}")


def article(path):
    from bs4 import BeautifulSoup

    if not path.exists():
        pytest.skip(f"{path} is not built (make book)")
    soup = BeautifulSoup(path.read_text("utf8"), "html.parser")
    return soup.select_one("article.bd-article")


def tex(element) -> str:
    """A formula's TeX, its words (``\\text{...}``) and equation number left out."""
    text = element.get_text()
    text = re.sub(r"^\(\d+\)#", "", text.strip())  # the equation number's anchor
    return " ".join(TEXT.sub(r"\\text{}", text).split())


def output_kinds(cell) -> list[tuple]:
    out = cell.select_one("div.cell_output")
    if out is None:
        return []
    return [(child.name, tuple(child.get("class", []))) for child in out.find_all(recursive=False)]


def code(cell) -> str:
    source = cell.select_one("div.cell_input")  # absent where the input is hidden
    return "" if source is None else source.get_text()


def table_shape(table) -> tuple[int, ...]:
    return tuple(len(row.find_all(["td", "th"])) for row in table.find_all("tr"))


def structure(page) -> dict[str, object]:
    """What a translation must leave as it is, for one built page."""
    main = article(page)
    return {
        "display math": [tex(m) for m in main.select("div.math")],
        "inline math": Counter(tex(m) for m in main.select("span.math")),
        "code cells": [code(c) for c in main.select("div.cell")],
        "outputs": [output_kinds(c) for c in main.select("div.cell")],
        "figures": [f.get("id") for f in main.select("figure")],
        "images": len(main.select("img")),
        "tables": [table_shape(t) for t in main.select("table")],
        "admonitions": [tuple(a.get("class", [])) for a in main.select("div.admonition")],
        "dropdowns": len(main.select("details")) + len(main.select("div.dropdown")),
        "exercises": [e.get("id") for e in main.select("div.exercise")],
        "solutions": [s.get("id") for s in main.select("div.solution")],
        "links": Counter(a.get("href") for a in main.select("a.reference.internal")),
        "back-links": [back_links(c, main) for c in main.select("div.citation")],
    }


def back_links(entry, main) -> int:
    """How many back-links a bibliography entry has; each must lead to a
    citation on the page (a translation once gave each entry three)."""
    targets = [a["href"].removeprefix("#") for a in entry.select('a[role="doc-backlink"]')]
    for target in targets:
        cited = main.find(id=target)
        assert cited is not None and "bibtex-citation" in cited.get("class", []), (
            f"the back-link #{target} of {entry.get('id')} leads to {cited and cited.name}"
        )
    return len(targets)


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_chinese_page_has_the_english_pages_elements(page):
    """Each page of both editions is parsed once: no display formula of either
    is empty or reduced to ``::``, and the Chinese page has every element of
    the English one."""
    name = page.with_suffix(".html")
    english, chinese = structure(HTML / name), structure(ZH / name)
    for edition, built in (("en", english), ("zh_CN", chinese)):
        for formula in built["display math"]:
            body = formula.removeprefix("\\[").removesuffix("\\]").strip()
            assert body and body != "::", f"{edition}/{page}: a display formula is {formula!r}"
    for element, expected in english.items():
        assert chinese[element] == expected, f"{page}: the {element} differ in zh_CN"

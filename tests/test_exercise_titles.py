"""_ext/exercise_titles.py on the built site: the "All exercises" page shows
each exercise's first paragraph in the page's language, and the Chinese
edition's exercise and solution titles read 「练习 10（标题）」 and 「练习 10 的解答」."""

from __future__ import annotations

import re

from conftest import HTML


def _soup(path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text("utf8"), "html.parser")


def test_the_list_shows_what_each_exercise_asks(built_site):
    for edition in (HTML, HTML / "zh_CN"):
        listing = _soup(edition / "appendix" / "exercises.html").select_one("article")
        items = listing.select("li")
        assert len(items) >= 40, len(items)
        page = _soup(edition / "chapters" / "04_vjp.html")
        paragraph = page.select_one("#vjp-ex-twice section p")
        # the words around the links: a link to a section shows the
        # section's quoted title in the list, whatever text it had on its page
        for link in paragraph.select("a"):
            link.replace_with("|")
        words = ["".join(part.split()) for part in paragraph.get_text().split("|")]
        shown = ["".join(li.get_text().split()) for li in items]
        assert any(all(w in text for w in words) for text in shown), words
        # a link with its own words keeps them (the words are checked in
        # test_explicit_link_text_is_kept)
        link = listing.select_one('a[href$="#vjp-target-list"]')
        fresh = _soup(edition / "chapters" / "04_vjp.html")
        mine = fresh.select_one('#vjp-ex-twice a[href$="#vjp-target-list"]')
        assert link.get_text() == mine.get_text(), link.get_text()
        # the links of a copied paragraph lead to their targets from this page
        hrefs = [a["href"] for li in items for a in li.select("a.reference.internal")]
        assert "../chapters/04_vjp.html#vjp-target-list" in hrefs


_EXERCISE = re.compile(r"```\{exercise\}[^\n]*\n:label: (\S+)\n(?::[^\n]*\n)*\n?(.*?)\n\n", re.S)
_EXPLICIT = re.compile(r"\{ref\}`([^`<]+?)\s*<([^`>]+)>`")


def _words(text):
    return " ".join(text.replace("’", "'").split())


def _shown(listing, label, target):
    """The texts of the links to target in the list's item of exercise label."""
    items = {
        id(li): li for a in listing.select(f'a[href$="#{label}"]') if (li := a.find_parent("li"))
    }
    return [
        _words(a.get_text()) for li in items.values() for a in li.select(f'a[href$="#{target}"]')
    ]


def test_explicit_link_text_is_kept(built_site):
    """A reference written with its own words, {ref}`the determinant's
    gradient <label>`, shows those words in the list, not the title of its
    target ("MatrixDeterminant"), in both editions."""
    from conftest import ROOT

    listing = _soup(HTML / "appendix" / "exercises.html").select_one("article")
    zh_listing = _soup(HTML / "zh_CN" / "appendix" / "exercises.html").select_one("article")
    seen = 0
    parts = ("chapters", "further")
    sources = [page for part in parts for page in sorted((ROOT / part).glob("*.md"))]
    for source in sources:
        for label, first in _EXERCISE.findall(source.read_text(encoding="utf8")):
            for text, target in _EXPLICIT.findall(first):
                shown = _shown(listing, label, target)
                assert _words(text) in shown, (label, text, shown)
                # the Chinese list shows the words of the Chinese exercise
                page = _soup(HTML / "zh_CN" / source.parent.name / (source.stem + ".html"))
                mine = page.select_one(f'#{label} section a[href$="#{target}"]').get_text()
                shown = _shown(zh_listing, label, target)
                assert _words(mine) in shown, (label, mine, shown)
                seen += 1
    assert seen >= 5, seen
    item = listing.select_one('a[href$="#rr-ex-adjugate"]').find_parent("li")
    text = _words(item.get_text())
    assert "the determinant's gradient" in text and "MatrixDeterminant" not in text, text


def test_chinese_exercise_and_solution_titles(built_site):
    page = _soup(HTML / "zh_CN" / "chapters" / "04_vjp.html")
    exercise = page.select_one("#vjp-ex-twice p.admonition-title").get_text()
    assert re.fullmatch(r"练习 \d+（[^()（）]+）", exercise), exercise
    solutions = [p.get_text() for p in page.select("div.solution p.admonition-title")]
    assert solutions and all(re.fullmatch(r"练习 \d+ 的解答", s) for s in solutions), solutions
    english = _soup(HTML / "chapters" / "04_vjp.html")
    title = " ".join(english.select_one("#vjp-ex-twice p.admonition-title").get_text().split())
    assert re.fullmatch(r"Exercise \d+ \(The same target twice\)", title), title

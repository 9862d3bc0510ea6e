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
        link = listing.select_one('a[href$="#vjp-target-list"]')
        title = "".join(link.get_text().split())
        assert link.get_text() != "the section on lists of targets", title
        assert any(f"“{title}”" in text for text in shown), title
        # the links of a copied paragraph lead to their targets from this page
        hrefs = [a["href"] for li in items for a in li.select("a.reference.internal")]
        assert "../chapters/04_vjp.html#vjp-target-list" in hrefs


def test_chinese_exercise_and_solution_titles(built_site):
    page = _soup(HTML / "zh_CN" / "chapters" / "04_vjp.html")
    exercise = page.select_one("#vjp-ex-twice p.admonition-title").get_text()
    assert re.fullmatch(r"练习 \d+（[^()（）]+）", exercise), exercise
    solutions = [p.get_text() for p in page.select("div.solution p.admonition-title")]
    assert solutions and all(re.fullmatch(r"练习 \d+ 的解答", s) for s in solutions), solutions
    english = _soup(HTML / "chapters" / "04_vjp.html")
    title = " ".join(english.select_one("#vjp-ex-twice p.admonition-title").get_text().split())
    assert re.fullmatch(r"Exercise \d+ \(The same target twice\)", title), title

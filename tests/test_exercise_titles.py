"""_ext/exercise_titles.py on the built site: the "All exercises" page links
every exercise, and the Chinese edition's exercise and solution titles read
「练习 10（标题）」 and 「练习 10 的解答」."""

from __future__ import annotations

import re

from conftest import HTML


def _soup(path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text("utf8"), "html.parser")


def test_the_list_links_every_exercise(built_site):
    """The "All exercises" page names each exercise once, by its number and
    title, with its libraries, in both editions."""
    from conftest import ROOT

    labels = [
        label
        for part in ("chapters", "further", "appendix")
        for page in (ROOT / part).glob("*.md")
        for label in re.findall(r"```\{exercise\}[^\n]*\n:label: (\S+)", page.read_text("utf8"))
    ]
    item_text = {
        HTML: r"Exercise \d+, \S.* \(\S.*\)",
        HTML / "zh_CN": r"练习 \d+“\S.*”（\S.*）",
    }
    for edition in (HTML, HTML / "zh_CN"):
        listing = _soup(edition / "appendix" / "exercises.html").select_one("article")
        items = listing.select("li")
        assert len(items) == len(labels), (len(items), len(labels))
        for label in labels:
            (item,) = [li for li in items if li.select_one(f'a[href$="#{label}"]')]
            text = " ".join(item.get_text().split())
            assert re.fullmatch(item_text[edition], text), text


def test_chinese_exercise_and_solution_titles(built_site):
    page = _soup(HTML / "zh_CN" / "chapters" / "04_vjp.html")
    exercise = page.select_one("#vjp-ex-twice p.admonition-title").get_text()
    assert re.fullmatch(r"练习 \d+（[^()（）]+）", exercise), exercise
    solutions = [p.get_text() for p in page.select("div.solution p.admonition-title")]
    assert solutions and all(re.fullmatch(r"练习 \d+ 的解答", s) for s in solutions), solutions
    english = _soup(HTML / "chapters" / "04_vjp.html")
    title = " ".join(english.select_one("#vjp-ex-twice p.admonition-title").get_text().split())
    assert re.fullmatch(r"Exercise \d+ \(The same target twice\)", title), title

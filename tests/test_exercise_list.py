"""The "All exercises" page (appendix/exercises.md) lists every exercise of
the book, each under its page and by its own title, in both editions."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from conftest import ROOT, toc_pages

EXERCISE = re.compile(r"```\{exercise\} (.+)\n:label: (\S+)")
PAGE = "appendix/exercises.html"


def book_exercises() -> dict[str, tuple[str, str]]:
    """label -> (page, English title) for every exercise in the book's sources."""
    found = {}
    for page in sorted(ROOT.glob("*/*.md")):
        if page.parts[-2] in ("chapters", "further", "appendix"):
            for title, label in EXERCISE.findall(page.read_text(encoding="utf-8")):
                assert label not in found, f"exercise label {label} twice"
                found[label] = (page.relative_to(ROOT).as_posix(), title)
    return found


class _Links(HTMLParser):
    """The text of each link in the page's article, by the anchor it points to."""

    def __init__(self):
        super().__init__()
        self.links: dict[str, list[str]] = {}
        self.href = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.href = dict(attrs).get("href") or ""
            self.links.setdefault(self.href.rpartition("#")[2], []).append("")

    def handle_endtag(self, tag):
        if tag == "a":
            self.href = None

    def handle_data(self, data):
        if self.href is not None:
            anchor = self.href.rpartition("#")[2]
            self.links[anchor][-1] += data


def _links(path) -> dict[str, list[str]]:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.links


def test_every_exercise_is_in_the_sources_the_list_reads():
    """Every page with exercises is in _toc.yml (the list is built from it),
    the oneDNN appendix's included."""
    toc = {p.as_posix() for p in toc_pages()}
    exercises = book_exercises()
    assert "onednn-ex-tie" in exercises
    assert {page for page, _ in exercises.values()} <= toc


@pytest.mark.parametrize("edition", ["en", "zh_CN"])
def test_the_list_links_every_exercise_by_its_number(built_site, edition):
    """Each exercise of the book is linked from the list by its number in the
    edition's words ("Exercise 12", "练习 12"), and the numbers run 1, 2, ..."""
    path = (built_site if edition == "en" else built_site / "zh_CN") / PAGE
    links = _links(path)
    number = "Exercise " if edition == "en" else "练习"
    seen = []
    for label in book_exercises():
        texts = [t.strip() for t in links.get(label, [])]
        numbered = {t for t in texts if t.startswith(number)}
        assert len(numbered) == 1, (edition, label, texts)  # linked, with one number
        seen.append(int(numbered.pop().removeprefix(number).strip()))
    assert sorted(seen) == list(range(1, len(seen) + 1)), seen


def test_downloads_keep_the_hidden_checks(built_site):
    """The page says the .md and .ipynb downloads keep the hidden cells."""
    for suffix in (".md", ".ipynb"):
        source = built_site / "_sources" / "chapters" / f"04_vjp{suffix}"
        assert "remove-cell" in source.read_text(encoding="utf-8"), suffix

"""The "All exercises" page (appendix/exercises.md) lists every exercise of
the book, each under its page and by its own title, in both editions."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from babel.messages.pofile import read_po

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


def _plain_quotes(text: str) -> str:
    return text.translate(str.maketrans("‘’“”", "''\"\""))


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
def test_the_list_names_every_exercise_by_its_title(built_site, edition):
    path = (built_site if edition == "en" else built_site / "zh_CN") / PAGE
    links = _links(path)
    exercises = book_exercises()
    catalogs = {}
    for label, (page, title) in exercises.items():
        # (SmartyPants curls the quotes of the HTML)
        texts = [_plain_quotes(t.strip()) for t in links.get(label, [])]
        if edition == "en":
            expected = title
            number = "Exercise "
        else:
            po = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / page.replace(".md", ".po")
            if po not in catalogs:
                with po.open("rb") as handle:
                    catalogs[po] = {m.id: m.string for m in read_po(handle) if not m.fuzzy}
            expected = catalogs[po].get(title)
            assert expected, f"{page}: no translation of the exercise title {title!r}"
            number = "练习"
        # one link "Exercise N" (in the edition's words), one with the title
        assert any(t.startswith(number) for t in texts), (edition, label, texts)
        assert _plain_quotes(expected) in texts, (edition, label, expected, texts)


@pytest.mark.parametrize("edition", ["en", "zh_CN"])
def test_excerpts_name_the_page_of_an_equation(built_site, edition):
    """An equation's number copied into the list, "(3)", is named with its
    page ("equation (3) of “…”"), and a section's title is quoted once."""
    path = (built_site if edition == "en" else built_site / "zh_CN") / PAGE
    body = path.read_text(encoding="utf-8")
    numbers = re.findall(r"(.{0,40})<a [^>]*><span[^>]*>\(\d+\)</span></a>", body)
    numbers += re.findall(r"(.{0,40})<a [^>]*>\(\d+\)</a>", body)
    before = "equation " if edition == "en" else "中的式"
    assert numbers, "no equation is referred to in the excerpts: the test is stale"
    assert all(text.endswith(before) for text in numbers), numbers
    assert "““" not in body and "””" not in body


def test_downloads_keep_the_hidden_checks(built_site):
    """The page says the .md and .ipynb downloads keep the hidden cells."""
    for suffix in (".md", ".ipynb"):
        source = built_site / "_sources" / "chapters" / f"04_vjp{suffix}"
        assert "remove-cell" in source.read_text(encoding="utf-8"), suffix

"""The Chinese edition (中文版): complete catalogs, the same numbers, links both ways.

The catalogs are locales/zh_CN/LC_MESSAGES/<page>.po (one per page of
_toc.yml). They are checked twice:

- as files (tests/i18n_checks.py): every message translated, none fuzzy, the
  MyST markup (code, math, roles and their targets) intact, and the terms of
  the glossary's term table used, and Chinese punctuation in Chinese prose;
- against the pages as they are now: the Chinese build writes every message
  it found no translation for to _build/zh_CN/untranslated.json, which
  catches a catalog that was not updated after the English changed.

README.md ("Updating the translation") says how to fix a failure here.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

import i18n_checks
from conftest import HTML, ROOT, toc_pages

ZH = HTML / "zh_CN"
UNTRANSLATED = ROOT / "_build" / "zh_CN" / "untranslated.json"
# The numbers of the source questions (seeds/000-002): the gradient and the
# sum from the puzzle, and two entries of the worked MatMul example.
SEED_NUMBERS = ("-0.17307831", "3.424693", "573", "1844")


def _catalog(page: Path) -> Path:
    return i18n_checks.LOCALE / page.with_suffix(".po")


def test_every_page_has_a_catalog():
    missing = [str(p) for p in toc_pages() if not _catalog(p).exists()]
    assert not missing, f"pages without a catalog (run 'make translations'): {missing}"
    extra = sorted(str(p.relative_to(i18n_checks.LOCALE)) for p in i18n_checks.catalogs()
                   if p.relative_to(i18n_checks.LOCALE).with_suffix(".md")
                   not in set(toc_pages()))
    assert not extra, f"catalogs of pages that are not in _toc.yml: {extra}"


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_catalog_is_complete_and_intact(page):
    problems = i18n_checks.problems(_catalog(page))
    assert not problems, f"{_catalog(page).relative_to(ROOT)}:\n" + "\n".join(
        f"  {message!r}: {problem}" for message, problem in problems)


def test_term_table_is_read():
    table = i18n_checks.term_table()
    for row in (("Jacobian", "雅可比矩阵"), ("Jacobian", "雅可比张量"), ("upstream gradient", "上游梯度"),
                ("vector-Jacobian product", "向量-雅可比积"), ("seed", "种子"),
                ("backward pass", "反向传播"), ("adjoint", "共轭转置")):
        assert row in table


def test_checker_finds_broken_markup_and_wrong_terms():
    """The checks themselves, on messages made to fail."""
    ok = "这里 {term}`上游梯度 <upstream gradient>` 与 `tape.gradient` 和 $G$ 一致。"
    assert i18n_checks.role_targets(ok) == i18n_checks.role_targets(
        "The {term}`upstream gradient` with `tape.gradient` and $G$.")
    assert i18n_checks.code_spans(ok) == i18n_checks.code_spans("`tape.gradient`")
    assert i18n_checks.maths("a $G$ b") != i18n_checks.maths("a $H$ b")
    assert i18n_checks.maths(r"$\text{left to right} = a$") == i18n_checks.maths(r"$\text{从左到右} = a$")
    table = i18n_checks.term_table()
    assert i18n_checks.term_problems("The reverse mode.", "反向计算。", table)
    assert not i18n_checks.term_problems("The reverse mode.", "反向模式。", table)
    assert i18n_checks.term_problems("Jacobians.", "雅可比数组。", table)
    assert not i18n_checks.term_problems("Jacobians.", "雅可比张量。", table)
    assert i18n_checks.term_problems("The backward pass.", "反向传递。", table)


def test_checker_finds_half_width_punctuation():
    """Chinese prose takes ，；：？！（）; code, math, roles, URLs and shapes keep theirs."""
    for wrong in ("矩阵,向量", "梯度 (gradient)", "如何变化?", "**是:** 对", "$x$;然后",
                  "见 {ref}`下文 <x>`(例外)"):
        assert i18n_checks.punctuation_problems(wrong), wrong
    for right in ("矩阵，向量", "梯度（gradient）", "形状为 (5, 3)，于是", "链是 (10×15)(15×15)。",
                  "调用 `f(a, b)`：", "即 $f(x, y)$。", "见 {ref}`下文 <a:b>`。",
                  "见 https://example.org/a?b=c 。", "Plain English (kept), as is."):
        assert not i18n_checks.punctuation_problems(right), right


def test_built_chinese_pages_have_every_message_translated(built_site):
    if not UNTRANSLATED.exists():
        pytest.fail(f"{UNTRANSLATED.relative_to(ROOT)} is missing: the Chinese build did not run")
    found = json.loads(UNTRANSLATED.read_text("utf8"))
    assert not found, "messages shown in English on the Chinese pages (run 'make translations'):\n" \
        + "\n".join(f"  {page}: {msg[:100]!r}" for page, msgs in found.items() for msg in msgs)


class _Text(HTMLParser):
    """The visible text of a page's article, and its language links."""

    def __init__(self):
        super().__init__()
        self.skip = 0
        self.article = 0
        self.text: list[str] = []
        self.edition_links: list[str] = []
        self.lang = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag in ("script", "style"):
            self.skip += 1
        if tag == "article" or self.article:
            self.article += 1 if tag not in ("br", "img", "hr", "input", "meta", "link") else 0
        if tag == "a" and "matgrad-edition" in (attrs.get("class") or ""):
            self.edition_links.append(attrs.get("href"))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip -= 1
        if self.article and tag not in ("br", "img", "hr", "input", "meta", "link"):
            self.article -= 1

    def handle_data(self, data):
        if self.article and not self.skip:
            self.text.append(data)


def _read(path: Path) -> _Text:
    parser = _Text()
    parser.feed(path.read_text("utf8"))
    return parser


@pytest.mark.parametrize("page", [p for p in toc_pages()
                                  if p.parts[0] in ("index.md", "chapters")], ids=str)
def test_seed_numbers_are_the_same_in_both_editions(page, built_site):
    en = " ".join(_read(built_site / page.with_suffix(".html")).text)
    zh = " ".join(_read(ZH / page.with_suffix(".html")).text)
    for number in SEED_NUMBERS:
        pattern = re.compile(r"(?<![\d.])" + re.escape(number) + r"(?![\d])")
        assert len(pattern.findall(zh)) == len(pattern.findall(en)), (
            f"{page}: {number} appears {len(pattern.findall(en))} times in English, "
            f"{len(pattern.findall(zh))} in Chinese")


def test_seed_numbers_are_on_the_pages(built_site):
    text = " ".join(" ".join(_read(ZH / p.with_suffix(".html")).text) for p in toc_pages()
                    if p.parts[0] in ("index.md", "chapters"))
    for number in SEED_NUMBERS:
        assert number in text, f"{number} is on no Chinese index or chapter page"
    index = " ".join(_read(ZH / "index.html").text)
    assert "所以谁能解释一下 tf_y[0,0] wrt tf_x 的梯度是如何减少到 -0.17307831 而不是 3.424693 的" \
        in index, "the Chinese index does not quote the source question in its Chinese version"


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_language_links_go_both_ways(page, built_site):
    en_path = built_site / page.with_suffix(".html")
    zh_path = ZH / page.with_suffix(".html")
    en, zh = _read(en_path), _read(zh_path)
    assert en.lang == "en" and zh.lang == "zh-CN", (en.lang, zh.lang)
    assert len(en.edition_links) == 1 and len(zh.edition_links) == 1
    there = (en_path.parent / urlparse(en.edition_links[0]).path).resolve()
    back = (zh_path.parent / urlparse(zh.edition_links[0]).path).resolve()
    assert there == zh_path.resolve(), f"{page}: English links to {there}"
    assert back == en_path.resolve(), f"{page}: Chinese links to {back}"


def test_chinese_pages_read_as_chinese(built_site):
    """Titles, sidebar captions and prose are Chinese; code and numbers are not touched."""
    index = (ZH / "index.html").read_text("utf8")
    assert "<title>矩阵的梯度" in index
    for caption in ("章节", "进阶", "附录"):
        assert f'<span class="caption-text">{caption}' in index, caption
    for page in toc_pages():
        text = " ".join(_read(ZH / page.with_suffix(".html")).text)
        cjk = len(i18n_checks.CJK.findall(text))
        assert cjk > 40, f"{page}: only {cjk} Chinese characters on the Chinese page"


@pytest.mark.site
def test_chinese_search_finds_chinese_words(server, browser):
    """Sphinx's Chinese search (jieba splits the text into words) finds a term."""
    tab = browser.new_page()
    tab.goto(f"{server}/zh_CN/search.html?q=%E9%9B%85%E5%8F%AF%E6%AF%94", wait_until="networkidle")
    tab.wait_for_selector("#search-results ul.search li", timeout=20_000)
    hits = tab.evaluate("() => Array.from(document.querySelectorAll("
                        "'#search-results ul.search li a')).map(a => a.getAttribute('href'))")
    assert any("glossary" in h for h in hits) and any("02_jacobian_tensors" in h for h in hits), hits
    tab.close()

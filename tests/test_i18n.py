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
    extra = sorted(
        str(p.relative_to(i18n_checks.LOCALE))
        for p in i18n_checks.catalogs()
        if p.relative_to(i18n_checks.LOCALE).with_suffix(".md") not in set(toc_pages())
        and p != i18n_checks.INTERFACE
    )
    assert not extra, f"catalogs of pages that are not in _toc.yml: {extra}"


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_catalog_is_complete_and_intact(page):
    problems = i18n_checks.problems(_catalog(page))
    assert not problems, f"{_catalog(page).relative_to(ROOT)}:\n" + "\n".join(
        f"  {message!r}: {problem}" for message, problem in problems
    )


def test_term_table_is_read():
    table = i18n_checks.term_table()
    for row in (
        ("Jacobian", "雅可比矩阵"),
        ("Jacobian", "雅可比张量"),
        ("upstream gradient", "上游梯度"),
        ("vector-Jacobian product", "向量-雅可比积"),
        ("seed", "种子"),
        ("backward pass", "反向传播"),
        ("adjoint", "共轭转置"),
    ):
        assert row in table


def test_checker_finds_broken_markup_and_wrong_terms():
    """The checks themselves, on messages made to fail."""
    ok = "这里 {term}`上游梯度 <upstream gradient>` 与 `tape.gradient` 和 $G$ 一致。"
    assert i18n_checks.role_targets(ok) == i18n_checks.role_targets(
        "The {term}`upstream gradient` with `tape.gradient` and $G$."
    )
    assert i18n_checks.code_spans(ok) == i18n_checks.code_spans("`tape.gradient`")
    assert i18n_checks.maths("a $G$ b") != i18n_checks.maths("a $H$ b")
    assert i18n_checks.maths(r"$\text{left to right} = a$") == i18n_checks.maths(
        r"$\text{从左到右} = a$"
    )
    table = i18n_checks.term_table()
    assert i18n_checks.term_problems("The reverse mode.", "反向计算。", table)
    assert not i18n_checks.term_problems("The reverse mode.", "反向模式。", table)
    assert i18n_checks.term_problems("Jacobians.", "雅可比数组。", table)
    assert not i18n_checks.term_problems("Jacobians.", "雅可比张量。", table)
    assert i18n_checks.term_problems("The backward pass.", "反向传递。", table)


def test_checker_finds_half_width_punctuation():
    """Chinese prose takes ，；：？！（）; code, math, roles, URLs and shapes keep theirs."""
    for wrong in (
        "矩阵,向量",
        "梯度 (gradient)",
        "如何变化?",
        "**是:** 对",
        "$x$;然后",
        "见 {ref}`下文 <x>`(例外)",
    ):
        assert i18n_checks.punctuation_problems(wrong), wrong
    for right in (
        "矩阵，向量",
        "梯度（gradient）",
        "形状为 (5, 3)，于是",
        "链是 (10×15)(15×15)。",
        "调用 `f(a, b)`：",
        "即 $f(x, y)$。",
        "见 {ref}`下文 <a:b>`。",
        "见 https://example.org/a?b=c 。",
        "Plain English (kept), as is.",
    ):
        assert not i18n_checks.punctuation_problems(right), right


def test_built_chinese_pages_have_every_message_translated(built_site):
    if not UNTRANSLATED.exists():
        pytest.fail(f"{UNTRANSLATED.relative_to(ROOT)} is missing: the Chinese build did not run")
    found = json.loads(UNTRANSLATED.read_text("utf8"))
    assert not found, (
        "messages shown in English on the Chinese pages (run 'make translations'):\n"
        + "\n".join(f"  {page}: {msg[:100]!r}" for page, msgs in found.items() for msg in msgs)
    )


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


@pytest.mark.parametrize(
    "page", [p for p in toc_pages() if p.parts[0] in ("index.md", "chapters")], ids=str
)
def test_seed_numbers_are_the_same_in_both_editions(page, built_site):
    en = " ".join(_read(built_site / page.with_suffix(".html")).text)
    zh = " ".join(_read(ZH / page.with_suffix(".html")).text)
    for number in SEED_NUMBERS:
        pattern = re.compile(r"(?<![\d.])" + re.escape(number) + r"(?![\d])")
        assert len(pattern.findall(zh)) == len(pattern.findall(en)), (
            f"{page}: {number} appears {len(pattern.findall(en))} times in English, "
            f"{len(pattern.findall(zh))} in Chinese"
        )


def test_seed_numbers_are_on_the_pages(built_site):
    text = " ".join(
        " ".join(_read(ZH / p.with_suffix(".html")).text)
        for p in toc_pages()
        if p.parts[0] in ("index.md", "chapters")
    )
    for number in SEED_NUMBERS:
        assert number in text, f"{number} is on no Chinese index or chapter page"
    index = " ".join(_read(ZH / "index.html").text)
    assert (
        "所以谁能解释一下，tf_y[0,0] 对 tf_x 的梯度怎么会变成 -0.17307831，而不是 3.424693？"
        in index
    ), "the Chinese index does not quote the source question in its Chinese version"


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
    hits = tab.evaluate(
        "() => Array.from(document.querySelectorAll("
        "'#search-results ul.search li a')).map(a => a.getAttribute('href'))"
    )
    assert any("glossary" in h for h in hits) and any("02_jacobian_tensors" in h for h in hits), (
        hits
    )
    tab.close()


# ---- no English on a Chinese page ------------------------------------------

# Words that stay as they are in Chinese text: names of software, sites,
# companies and languages, and API words the prose uses as names. Acronyms
# (VJP, CPU), identifiers (tape.gradient, float32, tf_y, MatMul, oneDNN) and
# single letters pass anyway.
ALLOWED_WORDS = {
    "Binder",
    "Python",
    "CPython",
    "Linux",
    "Windows",
    "Intel",
    "Arm",
    "Neoverse",
    "Eigen",
    "Fortran",
    "JavaScript",
    "Ctrl",
    "Stack",
    "Overflow",
    "matgrad",
    "reshape",
    "vec",
    "flat",
    "tanh",
    "pfor",
    "while",
    "Variable",
    # a library's or a platform's name, as its authors write it
    "Opacus",
    "Revolve",
    "ROCm",
    "Fuchsia",
    "Android",
    # people's names, and API words the newer pages use as names
    "Cholesky",
    "Hermite",
    "Baur",
    "Strassen",
    "Griewank",
    "Walther",
    "Wirtinger",
    "Sterbenz",
    "Frobenius",
    "Hadamard",
    "abs",
    "conj",
    "dtype",
}
# An English term after its Chinese, in full-width parentheses: 梯度（gradient）.
# A gloss may hold an apostrophe or an en dash: Sterbenz's lemma, Gauss–Newton matrix.
_GLOSS = re.compile(r"(?:(?<=[\u4e00-\u9fff])|^)（[A-Za-z][A-Za-z '’\-–]*）")
_WORD = re.compile(r"(?<![\w.\-/+])[A-Za-z][A-Za-z'\-]*(?![\w.\-(\[/+=])")
_VOID = {"br", "img", "hr", "input", "meta", "link", "source", "wbr", "col", "area", "base"}


def english_words(text: str) -> list[str]:
    """The English words of ``text`` that a Chinese page should not show."""
    text = re.sub(r"https?://\S+|\S+\.(?:org|com|io)\S*", " ", _GLOSS.sub(" ", text))
    found = []
    for word in _WORD.findall(text):
        word = word.strip("'-")
        if (
            len(word) < 2
            or word in ALLOWED_WORDS
            or word.upper() == word
            or re.search(r"[a-z][A-Z]|^[a-z]+[A-Z]", word)
        ):
            continue
        found.append(word)
    return found


class _Visible(HTMLParser):
    """What a reader sees of a page: its text and the words of its tooltips,
    labels and alt texts; not code, math, English-marked elements (lang="en"),
    print-only parts, nor the English column of the glossary's term table.
    The bibliography's entries are kept apart (``citations``)."""

    SKIP_TAGS = {"script", "style", "code", "pre", "kbd", "samp", "svg", "math", "template"}
    # cell_output: what code prints is the same on both editions (issue 18:
    # outputs are never translation messages); figures are checked apart.
    SKIP_CLASSES = {"notranslate", "math", "highlight", "onlyprint", "cell_output"}
    ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "data-bs-title")

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []  # "skip", "citation", "cite" or "" per open element
        self.found: list[str] = []
        self.citations: list[list[str]] = []
        self.term_table = False
        self.cell = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if attrs.get("id") == "glossary-zh-terms":
            self.term_table = True
        if tag == "tr":
            self.cell = 0
        if tag == "td":
            self.cell += 1
        skip = (
            tag in self.SKIP_TAGS
            or classes & self.SKIP_CLASSES
            or (attrs.get("lang") or "").startswith("en")
            or (self.term_table and tag == "td" and self.cell == 1)
        )
        kind = "skip" if skip else "citation" if "citation" in classes else ""
        if "bibtex-citation" in classes:  # a citation in the text, [P3]
            kind = "cite"
        if not any(k == "skip" for k in self.stack) and not skip:
            # a citation's tooltip is its reference (the references page cites too)
            cites = "references.html" in (attrs.get("href") or "") or {"citation", "cite"} & set(
                self.stack
            )
            for name in self.ATTRIBUTES:
                if attrs.get(name) and not (cites and name == "title"):
                    self.found.append(attrs[name])
        if kind == "citation":
            self.citations.append([])
        if tag not in _VOID:
            self.stack.append(kind)

    def handle_endtag(self, tag):
        if tag not in _VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if any(k == "skip" for k in self.stack):
            return
        if "citation" in self.stack:
            self.citations[-1].append(data)
        else:
            self.found.append(data)


def _published_words(bib: Path) -> list[str]:
    """What the references keep as published: titles, authors, journals,
    publishers, places, links."""
    from pybtex.database import parse_file

    kept = ["tensorflow/tensorflow", "doi:"]  # the theme's short form of a GitHub link
    for entry in parse_file(str(bib)).entries.values():
        for field in (
            "title",
            "booktitle",
            "series",
            "journal",
            "publisher",
            "address",
            "url",
            "doi",
            "eprint",
        ):
            if field in entry.fields:
                value = re.sub(r"[{}\\]", "", entry.fields[field])
                # "Cambridge, MA", and its parts
                kept += [value, *value.split(", ")] if field == "address" else [value]
        for person in entry.persons.get("author", []) + entry.persons.get("editor", []):
            kept.extend(
                name.strip("{}")
                for name in person.first_names
                + person.middle_names
                + person.prelast_names
                + person.last_names
            )
    return sorted(kept, key=len, reverse=True)


def _published_pattern(bib: Path) -> re.Pattern:
    """The published strings of ``bib``, matched only as whole words."""
    words = _published_words(bib)
    return re.compile("|".join(rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])" for w in words))


def test_published_strings_are_removed_as_whole_words():
    published = _published_pattern(ROOT / "appendix" / "references.bib")
    assert published.sub("", "Linux 与 Zhang, Li").split() == ["Linux", "与", ","]


def _author_surnames(bib: Path) -> set[str]:
    """The last names of the references' authors and editors (Giles, Pearlmutter, ...)."""
    from pybtex.database import parse_file

    return {
        part
        for entry in parse_file(str(bib)).entries.values()
        for person in entry.persons.get("author", []) + entry.persons.get("editor", [])
        if not any(name.startswith("{") for name in person.last_names)  # not an organisation
        for name in person.last_names
        for part in re.split(r"[\s-]+", name)
    }


def _chinese_pages() -> list[Path]:
    return sorted(p for p in ZH.rglob("*.html") if "_static" not in p.parts)


def test_english_words_are_found():
    assert english_words("计算 the gradient 的") == ["the", "gradient"]
    assert not english_words(
        "梯度（gradient）由 tape.gradient、float32、VJP、MatMul 和 tf_y[0] 给出"
    )
    assert not english_words("见 https://example.org/a/b 与 Binder，给出 gradient= 参数")


def test_chinese_pages_show_no_english(built_site):
    """Every Chinese page (and its interface, figures' alt texts, references'
    notes) is Chinese, outside code, math, names, URLs and references' titles."""
    bib = ROOT / "appendix" / "references.bib"
    published = _published_pattern(bib)
    authors = _author_surnames(bib)  # people's names stay in Latin script, as in d2l-zh
    problems = []
    for page in _chinese_pages():
        parser = _Visible()
        parser.feed(page.read_text("utf8"))
        words = [
            w
            for text in parser.found
            for w in english_words(text)
            if not set(w.split("-")) <= authors  # Kreutz-Delgado
        ]
        for citation in parser.citations:
            text = published.sub(" ", " ".join(citation).replace("\xa0", " "))
            words += english_words(text)
        if words:
            problems.append(f"  {page.relative_to(ZH)}: {sorted(set(words))}")
    assert not problems, "English on Chinese pages:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_chinese_pages_show_the_chinese_figures(page, built_site):
    """Each figure of a Chinese page is its Chinese twin, not the English image."""

    def images(path):
        return re.findall(r'<img [^>]*src="([^"]*_images/[^"]+\.png)"', path.read_text("utf8"))

    en_page, zh_page = built_site / page.with_suffix(".html"), ZH / page.with_suffix(".html")
    en, zh = images(en_page), images(zh_page)
    assert len(en) == len(zh), f"{page}: {len(en)} figures in English, {len(zh)} in Chinese"
    for en_src, zh_src in zip(en, zh, strict=True):
        en_png = (en_page.parent / en_src).read_bytes()
        zh_png = (zh_page.parent / zh_src).read_bytes()
        assert en_png != zh_png, f"{page}: the Chinese page shows the English figure {en_src}"


def _visible_text(html: str) -> str:
    """A page's text outside scripts, styles, code and typeset math."""
    html = re.sub(r"<(script|style|pre|code|math)\b[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_no_page_shows_literal_bold_markers(built_site):
    """A translation can break MyST's emphasis: a closing ``**`` right after a
    full-width mark and before a CJK character is not right-flanking, and the
    reader sees the asterisks (index.po had **这个矩阵是什么？**此后…)."""
    shown = []
    for page in toc_pages():
        for folder in (built_site, built_site / "zh_CN"):
            path = folder / page.with_suffix(".html")
            if "**" in _visible_text(path.read_text(encoding="utf-8")):
                shown.append(str(path.relative_to(built_site)))
    assert not shown, f"literal ** on {shown}"

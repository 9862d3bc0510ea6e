"""House rules of the pages that a reader notices: short code lines, the chapter
skeleton, and exercises that each have a solution and a hidden check."""

from __future__ import annotations

import re

import jupytext
import pytest

from conftest import ROOT, toc_pages

MAX_CODE_LINE = 80  # what fits in a code cell at 1280 px without scrolling
# Chapters and the "Going further" pages share the chapter skeleton.
CHAPTERS = [p for p in toc_pages() if p.parts[0] in ("chapters", "further")]


def _visible_code_cells(page):
    nb = jupytext.read(ROOT / page, fmt="md:myst")
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and "remove-cell" not in c.metadata.get("tags", [])
    ]


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_visible_code_lines_fit(page):
    long = [
        (len(line), line)
        for cell in _visible_code_cells(page)
        for line in cell.source.splitlines()
        if len(line) > MAX_CODE_LINE
    ]
    assert not long, f"{page}: code lines over {MAX_CODE_LINE} characters:\n" + "\n".join(
        f"  {n}: {line}" for n, line in long
    )


@pytest.mark.parametrize("page", CHAPTERS, ids=str)
def test_chapter_skeleton(page):
    text = (ROOT / page).read_text()
    assert "**What you will learn.**" in text and "**What you need.**" in text
    assert re.search(r"^## Summary\b", text, re.M), f"{page}: no Summary section"
    assert re.search(r"^## Exercises$", text, re.M), f"{page}: no Exercises section"
    first = jupytext.read(ROOT / page, fmt="md:myst").cells
    code = [c for c in first if c.cell_type == "code"]
    assert "remove-cell" in code[0].metadata.get("tags", []), "first cell must be the hidden setup"
    assert 'TF_ENABLE_ONEDNN_OPTS"] = "0"' in code[0].source


@pytest.mark.parametrize("page", CHAPTERS, ids=str)
def test_exercises_have_solutions_and_checks(page):
    text = (ROOT / page).read_text()
    labels = re.findall(r"```\{exercise\}[^\n]*\n:label: (\S+)", text)
    assert len(labels) >= 3, f"{page}: {len(labels)} exercises, at least 3 expected"
    for label in labels:
        start = re.search(r"\{solution-start\} " + re.escape(label) + r"\n:class: dropdown", text)
        assert start, f"{page}: exercise {label} has no dropdown solution"
        after = text[start.end() :]
        end = after.index("{solution-end}")
        rest = after[end:]
        nxt = rest.find("{exercise}")
        tail = rest if nxt < 0 else rest[:nxt]
        assert ":tags: [remove-cell]" in tail and "assert" in tail, (
            f"{page}: exercise {label} has no hidden check cell after its solution"
        )


# One meaning per letter ------------------------------------------------------
# The notation page's table "One meaning per letter" lists every capital letter
# a page may define. A definition is "<letter> = ..." inside math (not "\bar A =",
# "d(...) =", "\nabla L =" or a function of the letter such as "\det A ="); where
# the book fixes what a letter stands for, its right-hand side must match the
# pattern here (substitutions such as "W = B" included). Letters with no pattern
# may be defined freely, but only once listed.
LETTER_RULES = {
    "Z": r"\\tanh|XW",
    "Q": r"Z ?C",
    "P": r"A ?B",
    "R": r"XW - D",
    "S": r"\\tanh\(Z\)",
    "W": r"B\b",  # chapter 01: "with W = B" (the puzzle's factor)
    "X": r"B\b",  # chapter 02: AXC with X = B
    "F": r"$^",  # the Cholesky factor is defined by A = FF^H, never by a formula
    "D": r"$^",  # targets are data: never defined by a formula
}
FORBIDDEN = [
    # complex arrays are split into Re and Im, never into two letters
    (r"\b[A-Z]\s*\+\s*i\s*(\\,)?\s*[A-Z]\b", "a complex array split into two letters"),
    (r"\\partial L\s*/\s*\\partial [A-Z]\s*[+-]\s*i", "dL/dX + i dL/dW: use Re and Im"),
    (r"XW\s*-\s*Y\b", "least-squares targets written Y (Y is the output; targets are D)"),
    (r"of shape \$[A-Z]\$", "a shape written as a capital letter (shapes are lowercase)"),
]


def _math_of(page):
    text = (ROOT / page).read_text()
    text = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [a or b for a, b in re.findall(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", text, flags=re.S)]


def _letter_table():
    text = (ROOT / "appendix/notation.md").read_text()
    # the default letters, and the letters a page gives its own meaning
    section = re.split(r"\n\([\w-]+\)=\n", text.split("(notation-letters)=", 1)[1])[0]
    section += text.split("(notation-second)=", 1)[1]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| $")]
    return set(re.findall(r"\$([A-Z])(?:[_^][^$]*)?\$", " ".join(rows)))


def _definitions(math):
    for m in re.finditer(r"(?<![\\\w{}^_'])([A-Z])\s*=\s*(?!=)([^,;=]*)", math):
        before = math[: m.start()]
        if re.search(
            r"(\\bar|\\nabla|\\partial|\\hat|\\det|\\log|\\operatorname\{\w+\}|\bd)"
            r"\s*\{?\s*$",
            before,
        ):
            continue
        yield m.group(1), m.group(2).strip()


def test_the_letter_table_exists():
    assert {"T", "B", "Y", "G", "X", "W", "Z", "D"} <= _letter_table()


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_one_meaning_per_letter(page):
    letters = _letter_table()
    problems = []
    for math in _math_of(page):
        for pattern, why in FORBIDDEN:
            if re.search(pattern, math):
                problems.append(f"{why}: ${math.strip()[:70]}$")
        for letter, rhs in _definitions(math):
            if letter not in letters:
                problems.append(
                    f"{letter} = {rhs[:40]}: {letter} is not in the notation "
                    "page's table of letters"
                )
            elif letter in LETTER_RULES and not re.match(LETTER_RULES[letter], rhs):
                problems.append(
                    f"{letter} = {rhs[:40]}: the book's {letter} is {LETTER_RULES[letter]!r}"
                )
    text = (ROOT / page).read_text()
    for pattern, why in FORBIDDEN[3:]:
        if re.search(pattern, text):
            problems.append(why)
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


def test_the_letter_checks_catch_the_old_mistakes():
    # The three reuses issue 20 found, and two definitions that are fine.
    hits = lambda math: [why for pattern, why in FORBIDDEN if re.search(pattern, math)]
    assert hits("Z = X + iY") and hits(r"Z = X + i\,W")
    assert hits(r"\partial L/\partial X + i\,\partial L/\partial W")
    assert hits(r"\tfrac12 \lVert XW - Y\rVert^2")
    assert not hits(
        r"\partial L/\partial \operatorname{Re} A + i\,\partial L/\partial \operatorname{Im} A"
    )
    assert dict(_definitions(r"W = Z C")) == {"W": "Z C"}
    assert not re.match(LETTER_RULES["W"], "Z C")
    assert list(_definitions(r"\bar A = G B^{\mathsf H}")) == []
    assert list(_definitions(r"d\det A = \operatorname{tr}(\operatorname{adj}(A)\,dA)")) == []
    assert list(_definitions(r"\log\det A = 2\sum_i \log F_{ii}")) == []
    assert dict(_definitions(r"A = FF^{\mathsf H}")) == {"A": r"FF^{\mathsf H}"}


def test_the_roadmap_lists_every_page():
    # The introduction's roadmap names every chapter and "Going further" page.
    text = (ROOT / "index.md").read_text()
    roadmap = text.split("(intro-roadmap)=", 1)[1].split("(intro-how-to-read)=", 1)[0]
    linked = set(re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", roadmap))
    missing = []
    for page in CHAPTERS:
        label = re.search(r"^\(([\w-]+)\)=\n# ", (ROOT / page).read_text(), re.M).group(1)
        if label not in linked:
            missing.append(f"{page} ({label})")
    assert not missing, "the roadmap in index.md does not link: " + ", ".join(missing)


@pytest.mark.parametrize("page", toc_pages(), ids=str)
def test_folded_blocks_are_dropdown_admonitions(page):
    """sphinx-exercise registers handlers for the singlehtml builder, so Sphinx
    gives that builder (make pdf) only those and none of sphinx-design's html
    ones: a ``{dropdown}`` directive fails there. Folded blocks are
    ``{admonition}`` with ``:class: dropdown`` (sphinx-togglebutton)."""
    text = (ROOT / page).read_text()
    assert not re.search(r"^[`:]{3,}\{dropdown\}", text, re.M), f"{page} uses {{dropdown}}"

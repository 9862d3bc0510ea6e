"""The notation page's promises, checked against the mathematics of every page.

appendix/notation.md tells the reader what each letter means. That is true only
if the other pages keep to it, and any page's edit can break it, so the check
reads the mathematics ($...$ and $$...$$ outside code) of every page of
_toc.yml and asserts:

- each capital letter used alone in a formula has a row in one of the
  notation page's letter tables (the puzzle's, the default letters' or the
  page-dependent symbols');
- V, which the book never uses for the upstream gradient, appears nowhere;
- epsilon as a step, odot and ell_e appear only on the pages that the table of
  page-dependent symbols names;
- no formula uses i both as the imaginary unit and as an index;
- the page-dependent table is in the alphabetical order of the LaTeX name of
  each row's first symbol, without a leading var, hat or mathcal (epsilon
  under e, mathcal M under m).

It does not check that a page uses a letter in the meaning its row gives.
It lived in a hidden cell of the notation page, which made that page fail to
run when downloaded alone; it is a test of the book, so it is one here.
"""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, toc_pages

NOTATION = "notation"
# The appendix pages that name odot and ell_e in their own text.
APPENDIX = {"notation", "glossary", "exercises"}


def math_spans(text: str) -> list[str]:
    """The mathematics of a page: display math first, then inline math, with
    code cells and inline code (which includes roles' targets) removed."""
    text = re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    display = re.findall(r"\$\$(.*?)\$\$", text, re.S)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    return display + re.findall(r"\$([^$\n]+)\$", text)


@pytest.fixture(scope="module")
def book() -> dict[str, str]:
    return {p.stem: (ROOT / p).read_text(encoding="utf-8") for p in toc_pages()}


@pytest.fixture(scope="module")
def tables(book) -> dict[str, str]:
    here = book[NOTATION]
    return {
        "puzzle": here.split("(notation-puzzle)=")[1].split("\n\n")[1],
        "letters": here.split("| letter | default meaning |")[1].split("\n\n")[0],
        "second": here.split("| symbol | meaning on that page | where |")[1].split("\n\n")[0],
    }


@pytest.fixture(scope="module")
def used(book) -> dict[str, set[str]]:
    """Which pages use each capital letter alone, and the three page-bound
    symbols ("eps step", "odot", "ell_e")."""
    capital = re.compile(r"(?<![\\A-Za-z])([A-Z])(?![A-Za-z])")
    found: dict[str, set[str]] = {}
    for page, text in book.items():
        for span in math_spans(text):
            bare = re.sub(r"\\(operatorname|mathsf|mathcal|mathrm|text)\s*(\{[^}]*\}|\S)", "", span)
            bare = re.sub(r"\\[A-Za-z]+", "", bare)
            for letter in capital.findall(bare):
                found.setdefault(letter, set()).add(page)
            if re.search(r"\\varepsilon\s*[A-Z]", span):
                found.setdefault("eps step", set()).add(page)
            if "\\odot" in span:
                found.setdefault("odot", set()).add(page)
            if "\\ell_e" in span:
                found.setdefault("ell_e", set()).add(page)
    return found


def test_no_formula_uses_i_as_unit_and_index(book):
    for page, text in book.items():
        for span in math_spans(text):
            unit = re.search(
                r"[-+=(]\s*i\s*(\\,|\\partial|\\operatorname|[a-z(])|e\^\{i|\bi\s*\\theta", span
            )
            index = re.search(r"_\{?[a-z]*i|\\sum_\{?i", span)
            assert not (unit and index), (page, span)


def test_page_dependent_table_is_alphabetical(tables):
    firsts = [
        re.sub(r"\\(mathcal\s*|hat\s*|var)", "", line.split("$")[1]).lstrip("\\")[0]
        for line in tables["second"].splitlines()[2:]
    ]
    assert [f.lower() for f in firsts] == sorted(f.lower() for f in firsts), firsts


def test_every_capital_letter_has_a_row(tables, used):
    rows = {
        letter
        for table in tables.values()
        for line in table.splitlines()[2:]
        for letter in re.findall(r"\$([A-Z])[$^_]", line.split("|")[1])
    }
    assert set(used) - {"eps step", "odot", "ell_e"} <= rows | {"O"}, sorted(set(used) - rows)


def test_v_is_never_used(used):
    assert used.get("V", set()) <= {NOTATION}, used["V"]


def test_page_bound_symbols_stay_on_their_pages(used):
    assert used.get("eps step", set()) <= {"03_jacobian_chains", NOTATION}
    assert used.get("odot", set()) - APPENDIX == {"06b_around_the_rule"}, used
    assert used.get("ell_e", set()) - APPENDIX == {"per_example_gradients"}, used

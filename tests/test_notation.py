"""The notation page's promises, checked against the mathematics of every page.

appendix/notation.md tells the reader what each letter means. That is true only
if the other pages keep to it, and any page's edit can break it, so the check
reads the mathematics ($...$ and $$...$$ outside code) of every page of
_toc.yml and asserts:

- each capital letter used alone in a formula has a row in one of the
  notation page's letter tables (the puzzle's, the default letters', or the
  symbols with a page-specific meaning);
- V, which the book never uses for the upstream gradient, appears nowhere;
- epsilon as a step (the book's step is h) and odot (its entrywise product is
  circ) appear on no page but this one; ell_e only on the page the table of
  page-dependent symbols names;
- no formula uses i both as the imaginary unit and as an index;
- the table of page-specific symbols is in the order its page states:
  Latin letters first, alphabetically (ell under l, mathcal M under m), then Greek letters in
  Greek order, then operators.

- every row that links to a section ({ref}) names symbols that occur in the
  mathematics of that section, so a row cannot keep pointing at a section
  that has renamed or dropped its symbol.

It does not check that a page uses a letter in the meaning its row gives: the
last check finds a row whose symbol left its section, not a row whose words
are wrong.
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
def sections(book) -> dict[str, str]:
    """The text of every labelled part of the book, code cells removed: a
    label before a heading reaches the next heading of the same or a higher
    level; any other label (an exercise's) reaches the next label."""
    label = re.compile(r"^\(([\w-]+)\)=$|^:label:\s*([\w-]+)\s*$", re.M)
    found: dict[str, str] = {}
    for text in book.values():
        text = re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)
        marks = list(label.finditer(text))
        for mark, after in zip(marks, [*marks[1:], None], strict=True):
            end = after.start() if after else len(text)
            heading = re.match(r"\s*(#+) ", text[mark.end() :])
            if heading:
                same_or_higher = re.compile(rf"^#{{1,{len(heading.group(1))}}} ", re.M)
                later = same_or_higher.search(text, mark.end() + heading.end())
                end = later.start() if later else len(text)
            found[mark.group(1) or mark.group(2)] = text[mark.end() : end]
    return found


def symbol_heads(cell: str) -> list[str]:
    """The symbol each formula of a table cell names: a letter, a Greek
    letter, a calligraphic letter or an operator (a bar or hat dropped)."""
    head = re.compile(r"\\operatorname\s*\{\w+\}|\\mathcal\s*\{?\w|\\[A-Za-z]+|[A-Za-z]")
    spans = (re.sub(r"^\\(bar|hat)\s*", "", s.strip()) for s in re.findall(r"\$([^$]+)\$", cell))
    return [head.match(s).group(0) for s in spans]


def occurs(head: str, text: str) -> bool:
    """Whether the mathematics of ``text`` uses the symbol ``head``."""
    spans = math_spans(text)
    if len(head) == 1:  # a letter alone, not inside a command or a word
        bare = (
            re.sub(r"\\(operatorname|mathsf|mathcal|mathrm|text)\s*(\{[^}]*\}|\S)", "", s)
            for s in spans
        )
        letter = re.compile(rf"(?<![A-Za-z]){head}(?![A-Za-z])")
        return any(letter.search(re.sub(r"\\[A-Za-z]+", " ", s)) for s in bare)
    if head.startswith("\\mathcal"):
        pattern = r"\\mathcal\s*\{?" + head[-1]
    elif head.startswith("\\operatorname"):
        pattern = r"\\operatorname\s*\{" + re.search(r"\{(\w+)\}", head).group(1) + r"\}"
    else:
        pattern = re.escape(head) + r"(?![A-Za-z])"
    return any(re.search(pattern, s) for s in spans)


def test_every_linked_row_names_symbols_of_its_section(book, sections):
    """A row's {ref} targets exist, and each symbol of its first cell occurs
    in the mathematics of each section it links to."""
    start = book[NOTATION].index("(notation-indices)=")
    wrong = []  # the page-specific table is the page's last section
    for line in book[NOTATION][start:].splitlines():
        if not line.startswith("| $"):
            continue
        for target in re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", line):
            if target not in sections:
                wrong.append((target, "no such label", line))
                continue
            for head in symbol_heads(line.split("|")[1]):
                if not occurs(head, sections[target]):
                    wrong.append((target, head, line))
    assert not wrong, "\n".join(f"{t}: {h} not there, in {line}" for t, h, line in wrong)


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


GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
    "omicron pi rho sigma tau upsilon phi chi psi omega"
).split()


def lookup_key(symbol: str) -> tuple[int, int | str]:
    """Where a row's first symbol sorts: Latin letters (ell as l), then Greek
    letters in Greek order, then operators."""
    name = re.sub(r"\\(mathcal|hat)\s*", "", symbol).replace("\\ell", "l")
    if name[0].isalpha():
        return (0, name[0].lower())
    word = re.match(r"\\(?:var)?([A-Za-z]+)", name).group(1).lower()
    return (1, GREEK.index(word)) if word in GREEK else (2, word)


def test_single_page_table_is_in_lookup_order(tables):
    rows = tables["second"].splitlines()[2:]
    assert len(rows) > 1 and all(row.startswith("| $") for row in rows), rows
    keys = [lookup_key(line.split("$")[1]) for line in rows]
    assert keys == sorted(keys), keys


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
    assert used.get("eps step", set()) <= {NOTATION}  # a step is h
    # The entrywise product is written \circ on every page; \odot nowhere.
    assert used.get("odot", set()) <= {NOTATION}, used
    assert used.get("ell_e", set()) - APPENDIX == {"per_example_gradients"}, used

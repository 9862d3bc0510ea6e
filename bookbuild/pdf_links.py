"""The index page's links to the book's PDFs (`make pdf`, bookbuild/pdf.py).

After printing, `make pdf` copies both PDFs to the English site's top and
writes a note with links to them below the title of each edition's index
page (`add`), in the HTML Sphinx wrote: one line, no Sphinx run. A new site
makes the PDFs stale, so `make book` (bookbuild/pipeline.py) removes them and
takes the note out of the index pages again (`strip`) before it builds;
a link never points to a missing or older PDF.
"""

from __future__ import annotations

import re
from pathlib import Path

from bookbuild import editions as table

PDF_FILES = {row.language: f"matgrad-{row.language}.pdf" for row in table.EDITIONS}


def _index(row: table.Edition) -> tuple[str, str, str, tuple[str, ...]]:
    """The edition's index page (relative to the build folder), the way up from
    it to the English site's top, the note's words, and the PDFs (its own first)."""
    page = f"{row.folder}/html/index.html" if row.folder else "html/index.html"
    others = tuple(r.language for r in table.EDITIONS if r is not row)
    return page, "../" if row.folder else "", row.pdf_note, (row.language, *others)


EDITIONS = {row.language: _index(row) for row in table.EDITIONS}
# The published copies of the translations inside the English site (build_site.py).
PUBLISHED_INDEX = {row.language: f"html/{row.folder}/index.html" for row in table.EDITIONS[1:]}
LABELS = {row.language: (row.hreflang, row.name) for row in table.EDITIONS}
NOTE = re.compile(r'\n<p class="matgrad-book-pdfs">.*?</p>', re.S)


def note(edition: str) -> str:
    """The note for ``edition``'s index page: its words, then a link to each PDF."""
    _, up, words, order = EDITIONS[edition]
    links = " · ".join(
        f'<a href="{up}{PDF_FILES[pdf]}" hreflang="{LABELS[pdf][0]}" lang="{LABELS[pdf][0]}" '
        f'type="application/pdf">{LABELS[pdf][1]}</a>'
        for pdf in order
    )
    return (
        f'\n<p class="matgrad-book-pdfs"><i class="fa-solid fa-file-pdf" aria-hidden="true">'
        f"</i> {words} {links}</p>"
    )


def with_note(page: str, edition: str) -> str:
    """``page`` (an index page's HTML) with the note after its first ``</h1>``,
    once: a note already there is replaced."""
    page = NOTE.sub("", page)
    if "</h1>" not in page:
        raise ValueError(f"the {edition} index page has no </h1> to put the PDF links under")
    return page.replace("</h1>", "</h1>" + note(edition), 1)


def without_note(page: str) -> str:
    return NOTE.sub("", page)


def index_pages(build: Path) -> dict[str, list[Path]]:
    """Each edition's index pages in ``build`` (the Chinese one twice: its own
    site and the copy published in the English one)."""
    pages = {edition: [build / spec[0]] for edition, spec in EDITIONS.items()}
    for edition, published in PUBLISHED_INDEX.items():
        pages[edition].append(build / published)
    return pages


def add(build: Path) -> None:
    for edition, pages in index_pages(build).items():
        for path in pages:
            path.write_text(with_note(path.read_text("utf8"), edition), "utf8")


def strip(build: Path) -> None:
    """Take the note out of every index page that has it."""
    for pages in index_pages(build).values():
        for path in pages:
            if path.is_file():
                page = path.read_text("utf8")
                if NOTE.search(page):
                    path.write_text(without_note(page), "utf8")

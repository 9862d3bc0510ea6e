"""`make pdf`: the whole book as one PDF per edition, printed by Chromium.

    .venv/bin/python -m bookbuild.pdf      (after `make book`)

writes `_build/pdf/matgrad-en.pdf` and `_build/pdf/matgrad-zh_CN.pdf`:

1. Sphinx's `singlehtml` builder writes each edition as one page
   (`_build/singlehtml/`, `_build/zh_CN/singlehtml/`), through the editions of
   `bookbuild/build_site.py`: the same configuration, doctrees and execution
   cache as the site, so no page is read or run again.
2. Debian's Chromium (the one the browser tests use), driven by Playwright,
   opens each page over a local HTTP server (MathJax loads its fonts, which a
   `file://` page may not; a request to any other host is refused and fails
   the build) and waits until MathJax has typeset every formula.
   `book-print.js` then adds a cover and a contents page and keeps each
   heading with what follows it; `book-print.css` is the print style.
   Chinese text is set in the Noto CJK fonts the machine has
   (fonts-noto-cjk); Chromium embeds the glyphs it uses.
3. Chromium prints the page (A4, a tagged PDF, "n / N" in each footer). Its
   print has no `target-counter()`, so the contents' page numbers take a
   second print: the first one says, by its named destinations (read with
   pypdf), on which page each heading landed; those numbers go into the
   contents' boxes (of fixed width, so nothing moves), and the book is
   printed again. The first print is a draft: laid out as the book, with
   nothing painted but the heading's markers (book-print.css), so it takes
   a fraction of a full print's time. The last print's destinations must
   agree with the numbers it shows; a heading that ended its page in a
   print starts a page in the next one. Usually two prints; at most
   `MAX_PRINTS`.
4. The bookmarks are added by pypdf's writer in incremental mode (Chromium's
   print byte for byte, then pypdf's update): "Contents", each chapter
   (closed), its sections and their subsections, each at its heading, with
   the heading's words as the site shows them. Chromium's own outline
   (`outline=True`) is not used: in Chromium 156 it takes a title from the
   glyphs drawn for the heading, so it drops every formula ("∂Y/∂T as a
   rank-4 array" became " as a rank-4 array") and the space at each line
   break ("rank-4array"), and it nests by h1-h6, not by the book's parts.
   pypdf also writes the title and author into the document information.
   (pypdf's incremental writer still reads all 40,000 objects of a tagged
   print first: seconds of CPU per edition, in a process of its own.)
5. Both PDFs are copied to the English site's top, and the index page of
   each edition gets a line that links them (`bookbuild/pdf_links.py`).

No byte of the PDF is written here: Chromium writes the pages, the tags and
the named destinations, pypdf the bookmarks and the document information.
Nothing uses the network; a missing Chromium is an error that says what to
install. When nothing changed since the last `make pdf` (the site, this
file, the script, the style sheet, the browser), it does nothing; `--force`
prints anyway. `make bench` times it (benchmarks/pdf_time.py).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import logging
import multiprocessing
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bookbuild import chromium as chromium_flags
from bookbuild import editions as table
from bookbuild import local_server, pdf_links

ROOT = Path(__file__).resolve().parents[1]
PDF_DIR = ROOT / "_build" / "pdf"
PRINT_CSS = Path(__file__).with_name("book-print.css")
PRINT_JS = Path(__file__).with_name("book-print.js")

# Per edition (bookbuild/editions.py): its singlehtml build in
# bookbuild/build_site.py, the page's language, and the words of the cover and
# the contents.
EDITIONS = {
    row.language: {
        "sphinx": f"singlehtml-{row.language}",
        "lang": row.hreflang,
        "edition": row.edition_words,
        "contents": row.contents,
    }
    for row in table.EDITIONS
}

# The page's viewport is as wide as A4's text (210 mm less 2 x 15 mm margins,
# in CSS pixels), so that what book-print.js measures is as it will be printed.
VIEWPORT = {"width": round((210 - 2 * 15) / 25.4 * 96), "height": 1000}
PDF_OPTIONS = dict(
    format="A4",
    print_background=True,
    margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"},
    display_header_footer=True,
    header_template="<span></span>",
    footer_template=(
        '<div style="font-size:8px; width:100%; text-align:center; color:#555">'
        '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
    ),
    outline=False,  # (the bookmarks: see the docstring, 4.)
    tagged=True,  # the PDF keeps the page's structure, for screen readers
)
MAX_PRINTS = 4  # prints of one edition at most
# pypdf warns about the object count in Chromium's trailer, which is harmless.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def build_site():
    """bookbuild/build_site.py, the site's build (its editions and Sphinx runner)."""
    from bookbuild import build_site

    return build_site


def pdf_path(edition: str) -> Path:
    return PDF_DIR / f"matgrad-{edition}.pdf"


def singlehtml_dir(edition: str) -> Path:
    return build_site().SPHINX_BUILDS[EDITIONS[edition]["sphinx"]]["out"]


def colophon(edition: str) -> str:
    """The cover's last line: version, date of the build and licences, as the
    site's footer says them (bookbuild/editions.py), without the links."""
    import re

    from bookbuild import release

    date = time.strftime("%Y-%m-%d", time.gmtime())
    html = table.footer(table.edition(edition), release.version(), date, release.repository())
    return re.sub(r"<[^>]+>", "", html)


def cover_words(edition: str) -> tuple[str, str]:
    """The edition's title and author: _config.yml's, or the edition's own."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    overrides = build_site().SPHINX_BUILDS[EDITIONS[edition]["sphinx"]]["overrides"]
    return overrides.get("html_title", config["title"]), overrides.get("author", config["author"])


def destinations(data: bytes, names: list[str]) -> tuple[dict[str, tuple[int, float, float]], int]:
    """Where the PDF ``data`` has each of the named destinations ``names``:
    (page index, left, top) in points; and its number of pages."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    found = {
        str(name).lstrip("/"): (
            reader.get_destination_page_number(dest),
            float(dest.left or 0),
            float(dest.top or 0),
        )
        for name, dest in reader.named_destinations.items()
    }
    missing = [n for n in names if n not in found]
    if missing:
        raise RuntimeError(
            f"Chromium wrote no destination for {len(missing)} headings ({missing[:5]}...)"
        )
    return {n: found[n] for n in names}, len(reader.pages)


def with_bookmarks(data: bytes, entries: list[dict], places: dict, info: dict[str, str]) -> bytes:
    """The PDF ``data`` with bookmarks: ``places["pdf-contents"]`` first,
    titled ``info["contents"]``, then each entry (a heading: marker, title,
    level) at its place, nested by level, chapters closed; and the title and
    author of ``info`` in its document information. pypdf writes them as an
    incremental update, after ``data`` unchanged."""
    from pypdf import PdfWriter
    from pypdf.generic import Fit

    writer = PdfWriter(io.BytesIO(data), incremental=True)

    def bookmark(title, marker, parent=None, is_open=True):
        page, left, top = places[marker]
        return writer.add_outline_item(
            title=title,
            page_number=page,
            parent=parent,
            fit=Fit.xyz(left, top),
            is_open=is_open,
        )

    bookmark(info["contents"], "pdf-contents")
    parents = []  # the last bookmark at each level
    for entry in entries:
        level = min(entry["level"], len(parents))
        parent = parents[level - 1] if level else None
        parents[level:] = [bookmark(entry["title"], entry["marker"], parent, level > 0)]
    writer.page_mode = "/UseOutlines"
    writer.add_metadata({"/Title": info["title"], "/Author": info["author"]})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def open_book(context, base_url: str, edition: str) -> tuple:
    """The edition's single page, typeset and prepared for print; and the
    headings book-print.js found (marker, after, title, level, chapter)."""
    page = await context.new_page()
    await page.goto(f"{base_url}/index.html", wait_until="networkidle", timeout=180_000)
    # The whole book is one page: while its math is typeset, the page's main
    # thread answers no poll, for over a minute on a loaded two-core machine.
    await page.wait_for_function(
        "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=300_000
    )
    await page.evaluate("() => MathJax.startup.promise")
    left = await page.evaluate(
        "() => document.querySelectorAll('.math:not(:has(mjx-container))').length"
    )
    if left:
        raise RuntimeError(f"{edition}: {left} formulas were not typeset by MathJax")
    await page.add_style_tag(path=str(PRINT_CSS))
    await page.add_script_tag(path=str(PRINT_JS))
    await page.emulate_media(media="print")
    title, author = cover_words(edition)
    words = [title, author, EDITIONS[edition]["edition"], EDITIONS[edition]["contents"]]
    entries = await page.evaluate("words => bookPrint.prepare(words)", [*words, colophon(edition)])
    wide = await page.evaluate("() => bookPrint.overflowing()")
    if wide:
        raise RuntimeError(
            f"{edition}: {len(wide)} elements are wider than the printed "
            f"text and would be cut at the margin: {wide[:5]}"
        )
    return page, entries


class Laps:
    """Seconds spent on each step, summed over its repeats: ``lap(step)``
    ends a step (the time since the last call)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.last = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        self.seconds[step] = self.seconds.get(step, 0.0) + now - self.last
        self.last = now

    def __str__(self) -> str:
        return ", ".join(f"{step} {t:.1f} s" for step, t in self.seconds.items())


def alone_headings(entries: list[dict], places: dict, broken: set[str]) -> list[str]:
    """The headings whose next text went to a later page in a print, but
    not those that start a page already (if one still stands alone,
    nothing more can be done)."""
    return [
        e["marker"]
        for e in entries
        if e["after"]
        and e["marker"] not in broken
        and places[e["after"]][0] > places[e["marker"]][0]
    ]


async def print_numbered(page, edition: str, entries: list[dict], lap: Laps) -> tuple:
    """Print ``page`` until the contents show the pages its headings are
    printed on, and no heading ends a page where a page break before it
    helps; return the PDF, its number of pages, the places of the markers,
    and the number of prints, of drafts among them (book-print.css: prints
    that only say where the headings land) and of headings moved to a new
    page."""
    markers = ["pdf-contents", *(e["marker"] for e in entries)]
    names = markers + [e["after"] for e in entries if e["after"]]
    shown = dict.fromkeys(markers, "0")  # placeholders in the first print
    broken: set[str] = set()
    draft, drafts = True, 0
    for prints in range(1, MAX_PRINTS + 1):
        drafts += draft
        await page.evaluate("([pages, draft]) => bookPrint.fillPages(pages, draft)", [shown, draft])
        data = await page.pdf(**PDF_OPTIONS)
        lap("draft" if draft else "print")
        places, count = await asyncio.to_thread(destinations, data, names)
        lap("read")
        alone = alone_headings(entries, places, broken)
        printed = {m: str(places[m][0] + 1) for m in markers}
        if not (draft or alone) and printed == shown:
            return data, count, places, {"prints": prints, "drafts": drafts, "moved": len(broken)}
        await page.evaluate("markers => bookPrint.breakBefore(markers)", alone)
        broken.update(alone)
        shown, draft = printed, bool(alone)
    raise RuntimeError(f"{edition}: the headings still moved after {MAX_PRINTS} prints")


async def print_edition(browser, pool, edition: str) -> dict:
    """Print one edition's single page to its PDF, its bookmarks added in
    the process ``pool``; return what was done (prints, drafts, headings
    moved to a new page, chapters, pages, steps)."""
    lap = Laps()
    outside, errors = [], []
    with local_server.serving(singlehtml_dir(edition)) as base_url:

        async def local_only(route):
            url = route.request.url
            if url.startswith((base_url + "/", "data:")):
                await route.continue_()
            else:  # nothing of the book comes from the network
                outside.append(url)
                await route.abort()

        context = await browser.new_context(
            viewport=VIEWPORT, color_scheme="light", locale=EDITIONS[edition]["lang"]
        )
        await context.route("**/*", local_only)
        context.on("weberror", lambda e: errors.append(str(e.error)))
        page, entries = await open_book(context, base_url, edition)
        lap("load and prepare")
        data, count, places, done = await print_numbered(page, edition, entries, lap)
        await context.close()
    if errors:
        raise RuntimeError(f"{edition}: errors in the page: {errors}")
    if outside:
        raise RuntimeError(f"{edition}: the page asked the network for {outside}")
    title, author = cover_words(edition)
    info = {
        "contents": EDITIONS[edition]["contents"],
        "title": f"{title} ({EDITIONS[edition]['edition']})",
        "author": author,
    }
    loop = asyncio.get_running_loop()
    book = await loop.run_in_executor(pool, with_bookmarks, data, entries, places, info)
    pdf_path(edition).write_bytes(book)
    lap("bookmarks")
    return {
        **done,
        "chapters": sum(e["chapter"] for e in entries),
        "pages": count,
        "steps": str(lap),
    }


async def print_all(exe: str) -> dict[str, dict]:
    """Both editions at once (one Chromium, a tab each: the machine has two
    cores), and their bookmarks in a process each: pypdf reads all 40,000
    objects of a tagged print first, seconds of Python that two threads of
    one process would take turns at."""
    from playwright.async_api import async_playwright

    spawn = multiprocessing.get_context("spawn")  # (no fork of a process with threads)
    with ProcessPoolExecutor(len(EDITIONS), mp_context=spawn) as pool:
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path=exe, args=chromium_flags.FLAGS, headless=True
            )
            printing = (print_edition(browser, pool, e) for e in EDITIONS)
            results = await asyncio.gather(*printing)
            await browser.close()
    return dict(zip(EDITIONS, results, strict=True))


def chromium_executable() -> str:
    found = chromium_flags.path()
    if found is None:
        raise SystemExit(
            "make pdf: Chromium is needed to print the book (Debian: apt-get install chromium)"
        )
    return found


# `make book` removes the PDFs whenever the site changes (pipeline.py); the
# PDFs also depend on this printer, its script and style sheet, and the
# browser. Their digest, with the site's (pipeline.py's stamp of the last
# successful build), is kept beside the PDFs: when both PDFs exist and it
# matches, there is nothing to do.
BOOK_OK = ROOT / "_build" / ".book-succeeded"
PDF_OK = ROOT / "_build" / ".pdf-succeeded"


def inputs_digest(exe: str) -> str | None:
    if not BOOK_OK.exists():
        return None
    digest = hashlib.sha256(BOOK_OK.read_bytes())
    for path in (Path(__file__), PRINT_CSS, PRINT_JS):
        digest.update(path.read_bytes())
    browser = Path(exe).resolve()
    digest.update(f"{browser} {browser.stat().st_mtime_ns}".encode())
    return digest.hexdigest()


def up_to_date(digest: str | None) -> bool:
    site = build_site().SPHINX_BUILDS["en"]["out"]
    return (
        digest is not None
        and PDF_OK.exists()
        and PDF_OK.read_text() == digest
        and all(pdf_path(e).exists() and (site / pdf_path(e).name).exists() for e in EDITIONS)
    )


def report(edition: str, done: dict) -> str:
    return (
        f"{pdf_path(edition).relative_to(ROOT)}: {done['chapters']} chapters, "
        f"{done['pages']} pages, {pdf_path(edition).stat().st_size / 1e6:.1f} MB; "
        f"{done['prints']} prints (drafts: {done['drafts']}), "
        f"{done['moved']} headings moved to a new page; "
        f"{done['steps']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--print-only",
        action="store_true",
        help="print the single pages built last time (for work on the print style)",
    )
    parser.add_argument("--force", action="store_true", help="build even if nothing changed")
    args = parser.parse_args()
    start = time.perf_counter()
    site = build_site()
    if not (site.SPHINX_BUILDS["en"]["out"] / "index.html").exists():
        raise SystemExit("make pdf: build the site first (make book)")
    exe = chromium_executable()
    digest = inputs_digest(exe)
    if not (args.force or args.print_only) and up_to_date(digest):
        print(f"make pdf: nothing changed since the last build ({PDF_DIR.relative_to(ROOT)})")
        return 0
    PDF_OK.unlink(missing_ok=True)
    if not args.print_only:
        status = site.build_editions([EDITIONS[e]["sphinx"] for e in EDITIONS], fresh=False)
        if status:
            return status
    built = time.perf_counter()
    PDF_DIR.mkdir(parents=True, exist_ok=True)
    for edition in EDITIONS:
        pdf_path(edition).unlink(missing_ok=True)
    for edition, done in asyncio.run(print_all(exe)).items():
        print(report(edition, done))
    printed = time.perf_counter()
    if args.print_only:
        return 0
    # The English site serves both PDFs at its top; the index pages link them.
    for edition in EDITIONS:
        shutil.copyfile(pdf_path(edition), site.SPHINX_BUILDS["en"]["out"] / pdf_path(edition).name)
    pdf_links.add(ROOT / "_build")
    if digest:
        PDF_OK.write_text(digest)
    print(
        f"make pdf: one page per edition {built - start:.1f} s, printing "
        f"{printed - built:.1f} s ({PDF_DIR.relative_to(ROOT)}; the index pages link them)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

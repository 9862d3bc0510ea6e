"""`make pdf`: the whole book as one PDF per edition, printed by Chromium.

    .venv/bin/python -m bookbuild.pdf      (after `make book`)

writes `_build/pdf/matgrad-en.pdf` and `_build/pdf/matgrad-zh_CN.pdf`:

1. Sphinx's `singlehtml` builder writes each edition as one page
   (`_build/singlehtml/`, `_build/zh_CN/singlehtml/`), through the editions of
   `bookbuild/build_site.py`: the same configuration, doctrees and execution cache
   as the site, so no page is read or run again.
2. Debian's Chromium (the one the browser tests use), driven by Playwright,
   opens each page over a local HTTP server (MathJax loads its fonts, which a
   `file://` page may not), waits until MathJax has typeset every formula,
   adds a cover and a contents page, and prints it (A4) with `book-print.css`,
   PDF bookmarks (`outline=True`) and a tagged PDF. Links between pages are
   links inside the single page, so they stay links inside the PDF. Chinese
   text is set in the Noto CJK fonts the machine has; Chromium embeds the
   glyphs it uses.
3. The site is built again (only written, not read), so that the download
   menu of every page links to both PDFs, which the site then serves at its
   top (`_ext/pdf_links.py`).

Nothing here uses the network; a missing Chromium is an error that says what
to install.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from bookbuild import chromium as chromium_flags

ROOT = Path(__file__).resolve().parents[1]
PDF_DIR = ROOT / "_build" / "pdf"
PRINT_CSS = Path(__file__).with_name("book-print.css")

# Per edition: the singlehtml edition of bookbuild/build_site.py, and the cover.
EDITIONS = {
    "en": {
        "sphinx": "singlehtml-en",
        "lang": "en",
        "edition": "English edition",
        "contents": "Contents",
    },
    "zh_CN": {
        "sphinx": "singlehtml-zh_CN",
        "lang": "zh-CN",
        "edition": "中文版",
        "contents": "目录",
    },
}


def build_site():
    """bookbuild/build_site.py, the site's build (its editions and Sphinx runner)."""
    from bookbuild import build_site

    return build_site


def pdf_path(edition: str) -> Path:
    return PDF_DIR / f"matgrad-{edition}.pdf"


def singlehtml_dir(edition: str) -> Path:
    return build_site().EDITIONS[EDITIONS[edition]["sphinx"]]["out"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(folder: Path):
    """``folder`` over HTTP on 127.0.0.1 (a free port)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


# Runs in the page before printing: a cover in front of the book. The
# contents page after it is the theme's own print-only table of contents,
# which on the single page is the whole book's (part captions and chapters,
# in _toc.yml order, linked to the chapters). Links written as
# "index.html#x" point into this same page: they become "#x", so that the
# PDF has them as links inside it.
PREPARE_JS = """([title, author, edition]) => {
  const main = document.querySelector('article.bd-article');
  const cover = document.createElement('section');
  cover.className = 'book-cover';
  for (const [cls, text] of [['title', title], ['edition', edition], ['author', author]]) {
    const p = document.createElement('p');
    p.className = 'book-cover__' + cls;
    p.textContent = text;
    cover.appendChild(p);
  }
  const body = document.querySelector('#jb-print-docs-body');
  // The part captions are headings for the screen reader's sake; in the PDF
  // they would become bookmarks of their own, all pointing at this page.
  body.querySelectorAll('[role="heading"]').forEach(e => {
    e.removeAttribute('role'); e.removeAttribute('aria-level'); });
  body.parentElement.insertBefore(cover, body);
  // The index page's title is a chapter title among the others (h2 on the
  // single page), so that the bookmarks list the chapters at the top level.
  const first = main.querySelector('h1');
  const h2 = document.createElement('h2');
  h2.innerHTML = first.innerHTML;
  first.replaceWith(h2);
  document.querySelectorAll('a[href^="index.html#"]').forEach(
    a => a.setAttribute('href', a.getAttribute('href').slice('index.html'.length)));
  return Array.from(document.querySelectorAll('span[id^="document-"] + section > :is(h1, h2)'))
    .map(h => h.textContent.replace(/#$/, '').trim());
}"""

FOOTER = (
    '<div style="font-size:8px; width:100%; text-align:center; color:#555">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)


async def print_edition(browser, edition: str) -> list[str]:
    """Print one edition's single page to its PDF; return the chapter titles."""
    spec = EDITIONS[edition]
    with serve(singlehtml_dir(edition)) as base_url:
        context = await browser.new_context(
            viewport={"width": 1000, "height": 1400}, color_scheme="light", locale=spec["lang"]
        )
        page = await context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(f"{base_url}/index.html", wait_until="networkidle", timeout=180_000)
        await page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=60_000
        )
        await page.evaluate("() => MathJax.startup.promise")
        left = await page.evaluate(
            "() => document.querySelectorAll('.math:not(:has(mjx-container))').length"
        )
        if left:
            raise RuntimeError(f"{edition}: {left} formulas were not typeset by MathJax")
        title, author = cover_words(edition)
        await page.add_style_tag(path=str(PRINT_CSS))
        chapters = await page.evaluate(PREPARE_JS, [title, author, spec["edition"]])
        await page.emulate_media(media="print")
        await page.pdf(
            path=str(pdf_path(edition)),
            format="A4",
            print_background=True,
            margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"},
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            outline=True,
            tagged=True,
        )
        await context.close()
    if errors:
        raise RuntimeError(f"{edition}: errors in the page: {errors}")
    return chapters


async def print_all(exe: str) -> dict[str, list[str]]:
    """Both editions at once (one Chromium, a tab each: the machine has two cores)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=exe, args=chromium_flags.FLAGS, headless=True
        )
        results = await asyncio.gather(*(print_edition(browser, e) for e in EDITIONS))
        await browser.close()
    return dict(zip(EDITIONS, results, strict=True))


def cover_words(edition: str) -> tuple[str, str]:
    """The edition's title and author: _config.yml's, or the edition's own."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    overrides = build_site().EDITIONS[EDITIONS[edition]["sphinx"]]["overrides"]
    return overrides.get("html_title", config["title"]), overrides.get("author", config["author"])


def chromium() -> str:
    found = chromium_flags.path()
    if found is None:
        raise SystemExit(
            "make pdf: Chromium is needed to print the book (Debian: apt-get install chromium)"
        )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--print-only",
        action="store_true",
        help="print the single pages built last time (for work on the print CSS)",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    site = build_site()
    if not (site.EDITIONS["en"]["out"] / "index.html").exists():
        raise SystemExit("make pdf: build the site first (make book)")
    exe = chromium()
    if not args.print_only:
        status = site.build_editions([EDITIONS[e]["sphinx"] for e in EDITIONS], fresh=False)
        if status:
            return status
    built = time.perf_counter()
    PDF_DIR.mkdir(parents=True, exist_ok=True)
    for edition in EDITIONS:
        pdf_path(edition).unlink(missing_ok=True)
    for edition, chapters in asyncio.run(print_all(exe)).items():
        print(
            f"{pdf_path(edition).relative_to(ROOT)}: {len(chapters)} chapters, "
            f"{pdf_path(edition).stat().st_size / 1e6:.1f} MB"
        )
    printed = time.perf_counter()
    if args.print_only:
        return 0
    # The index pages again, now with links to the PDFs (the other pages do
    # not change); the English site copies the PDFs to its top.
    status = site.build_editions(["en", "zh_CN"], fresh=False, only=["index.md"])
    if status:
        return status
    site.publish_zh()
    print(
        f"make pdf: one page per edition {built - start:.1f} s, printing "
        f"{printed - built:.1f} s, index pages with the links {time.perf_counter() - printed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

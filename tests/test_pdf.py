"""The whole book as PDF, one per edition (`make pdf`, bookbuild/pdf.py).

Each PDF opens with pypdf; every chapter's title (as the built site shows
it) is among its bookmarks or in its text; the numbers of the book's seed
question are in its text; the Chinese one is in Chinese and embeds a CJK
font; no page is wider than A4; the page count is sane. Two pages of each
are rendered to PNG (poppler's pdftoppm) into _build/screenshots/ for a
reviewer.

`make pdf` is not part of `make test` (README.md, "Other targets"), so the
module is skipped, with the reason, when the PDFs are not built; with
CI=true they are required only when MATGRAD_REQUIRE_PDF=1 says that the
run built them.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import HTML, IN_CI, ROOT, TRANSLATIONS, toc_pages

PDF_DIR = ROOT / "_build" / "pdf"
SHOTS = ROOT / "_build" / "screenshots"
EDITIONS = ("en", *TRANSLATIONS)
A4_POINTS = (595.92, 842.88)  # Chromium's A4: 8.27 x 11.7 in
# The seed question's numbers (index.md): d(sum Y)/dX[0, 0] and one entry of
# the gradient for W, as the executed pages print them.
SEED_NUMBERS = ("-0.17307831", "3.424693")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _pdf(edition: str) -> Path:
    path = PDF_DIR / f"matgrad-{edition}.pdf"
    if not path.exists():
        reason = f"{path.relative_to(ROOT)} is not built: run 'make pdf'"
        if IN_CI and os.environ.get("MATGRAD_REQUIRE_PDF") == "1":
            pytest.fail(f"{reason} (MATGRAD_REQUIRE_PDF=1)")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module", params=EDITIONS)
def book(request):
    from pypdf import PdfReader

    path = _pdf(request.param)
    reader = PdfReader(path)
    text = "\n".join(page.extract_text() or "" for page in reader.pages)
    return request.param, path, reader, text


def _outline_titles(outline) -> list[str]:
    titles = []
    for item in outline:
        if isinstance(item, list):
            titles += _outline_titles(item)
        else:
            titles.append(item.title)
    return titles


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def chapter_titles(edition: str) -> list[str]:
    """Each page's title as the built site of ``edition`` shows it."""
    site = HTML if edition == "en" else HTML / edition
    titles = []
    for page in toc_pages():
        built = (site / page.with_suffix(".html")).read_text("utf8")
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", built, re.S).group(1)
        h1 = re.sub(r'<a class="headerlink".*?</a>', "", h1, flags=re.S)
        titles.append(html.unescape(re.sub(r"<[^>]+>", "", h1)).strip())
    return titles


def test_every_chapter_title_is_in_the_book(book):
    edition, path, reader, text = book
    outline = _squash(" ".join(_outline_titles(reader.outline)))
    body = _squash(text)
    missing = [
        t for t in chapter_titles(edition) if _squash(t) not in outline and _squash(t) not in body
    ]
    assert not missing, f"{path.name}: chapter titles not found: {missing}"
    assert reader.outline, f"{path.name} has no bookmarks"


def test_seed_numbers_are_printed(book):
    edition, path, reader, text = book
    for number in SEED_NUMBERS:
        assert number in text, f"{path.name}: {number} is not in the text"


def test_chinese_edition_is_chinese_with_an_embedded_cjk_font(book):
    edition, path, reader, text = book
    chinese = len(CJK.findall(text))
    if edition == "en":
        assert chinese < 0.01 * len(text), f"{path.name}: {chinese} CJK characters"
        return
    # (a code-heavy book: about a fifth of the Chinese edition's characters)
    assert chinese > 0.1 * len(re.sub(r"\s", "", text)), (
        f"{path.name}: only {chinese} CJK characters in {len(text)}"
    )
    fonts = set()
    for page in reader.pages:
        for font in (page.get("/Resources", {}).get("/Font", {}) or {}).values():
            font = font.get_object()
            if font.get("/Subtype") == "/Type3":  # glyphs drawn in the PDF itself
                fonts.add(("Type3", True))
                continue
            descriptor = font.get("/FontDescriptor") or (
                font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
                if "/DescendantFonts" in font
                else None
            )
            if descriptor is None:
                continue
            descriptor = descriptor.get_object()
            embedded = any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
            fonts.add((str(font.get("/BaseFont")), embedded))
    # Chromium embeds Noto Sans CJK (a .ttc collection) as Type 3 fonts:
    # the glyphs are in the PDF; the English edition needs none of them.
    cjk = [name for name, embedded in fonts if embedded and ("CJK" in name or name == "Type3")]
    assert cjk, f"{path.name}: no embedded CJK font among {sorted(fonts)}"


def test_pages_fit_the_paper_and_count_is_sane(book):
    edition, path, reader, text = book
    count = len(reader.pages)
    # Fifteen pages of prose, code, figures and exercises: well over one
    # sheet each, far from thousands.
    assert 40 <= count <= 600, f"{path.name}: {count} pages"
    for number, page in enumerate(reader.pages, 1):
        width, height = float(page.mediabox.width), float(page.mediabox.height)
        assert width <= A4_POINTS[0] + 1 and height <= A4_POINTS[1] + 1, (
            f"{path.name}: page {number} is {width:.0f} x {height:.0f} pt, larger than A4"
        )


def test_two_pages_render_to_png(book):
    """Render the contents page and a page with math, a figure and code."""
    edition, path, reader, text = book
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm is not installed (Debian: apt-get install poppler-utils)")
    SHOTS.mkdir(parents=True, exist_ok=True)
    # The first page after the contents whose text shows code (tf.) and
    # that holds an image: a chapter page as a reader sees it.
    with_code = [
        n
        for n, page in enumerate(reader.pages, 1)
        if n > 3 and "tf." in (page.extract_text() or "")
    ]
    chosen = next(
        (n for n in with_code if reader.pages[n - 1].images), with_code[0] if with_code else None
    )
    assert chosen is not None, f"{path.name}: no page with code and a figure"
    for number in (2, chosen):
        stem = SHOTS / f"pdf-{edition}-p{number}"
        subprocess.run(
            [
                "pdftoppm",
                "-png",
                "-r",
                "80",
                "-f",
                str(number),
                "-l",
                str(number),
                "-singlefile",
                str(path),
                str(stem),
            ],
            check=True,
        )
        assert stem.with_suffix(".png").stat().st_size > 10_000

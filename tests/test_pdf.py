"""The whole book as PDF, one per edition (`make pdf`, bookbuild/pdf.py).

Each PDF opens with pypdf; every chapter's title (as the built site shows
it) is among its bookmarks or in its text; the bookmarks follow the book's
contents (every page of _toc.yml in order, with its sections as the site
shows them, no title doubled) and each one points at the page and place its
heading is printed on; the number printed beside each line of the contents
page is the page its heading is printed on; the numbers of the book's seed
question are in its text; the Chinese one is in Chinese and embeds a CJK
font; no page is wider than A4; the page count is sane; the printed pages
load nothing from the network; every page's footer reads "n / N"; the PDF
is tagged, in its edition's language. Two pages of each are rendered to
PNG (poppler's pdftoppm) into _build/screenshots/ for a reviewer.

`make pdf` is not part of `make test` (README.md, "Other targets"), so the
tests of the PDFs are skipped, with the reason, when they are not built;
with CI=true they are required only when MATGRAD_REQUIRE_PDF=1 says that
the run built them (.ci/run does).
"""

from __future__ import annotations

import hashlib
import html
import io
import os
import pickle
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from conftest import HTML, IN_CI, ROOT, TRANSLATIONS, require_or_skip, toc_pages

PDF_DIR = ROOT / "_build" / "pdf"
SHOTS = ROOT / "_build" / "screenshots"
EDITIONS = ("en", *TRANSLATIONS)
A4_POINTS = (595.92, 842.88)  # Chromium's A4: 8.27 x 11.7 in
# The seed question's numbers (index.md): d(sum Y)/dX[0, 0] and one entry of
# the gradient for W, as the executed pages print them.
SEED_NUMBERS = ("-0.17307831", "3.424693")
# The page numbers are printed in the bottom margin (16 mm), below this.
FOOTER_TOP = 16 / 25.4 * 72
# The contents page's title, the first bookmark (bookbuild/pdf.py).
CONTENTS = {"en": "Contents", "zh_CN": "目录"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _pdf(edition: str) -> Path:
    path = PDF_DIR / f"matgrad-{edition}.pdf"
    if not path.exists():
        reason = f"{path.relative_to(ROOT)} is not built: run 'make pdf'"
        if IN_CI and os.environ.get("MATGRAD_REQUIRE_PDF") == "1":
            pytest.fail(f"{reason} (MATGRAD_REQUIRE_PDF=1)")
        pytest.skip(reason)
    return path


# A word of pdftotext's -bbox-layout output: its box, top-down, in points.
_WORD = re.compile(
    r'<word xMin="([-\d.e]+)" yMin="([-\d.e]+)" xMax="[-\d.e]+" yMax="([-\d.e]+)">([^<]*)</word>'
)


def _extract(path: Path) -> tuple[list[str], list[list[tuple[float, float, str, float]]]]:
    """Each page's text, and its words as (x, y, text, height in points): x
    where the word starts, y the middle of its line upwards from the foot.
    Poppler's pdftotext (the package that has pdftoppm) reads both editions
    in a few seconds of CPU; pypdf's text extraction took a minute."""
    if shutil.which("pdftotext") is None:
        require_or_skip("pdftotext is not installed (Debian: apt-get install poppler-utils)")
    out = subprocess.run(
        ["pdftotext", "-bbox-layout", str(path), "-"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    texts, words = [], []
    for page in re.split(r"<page ", out)[1:]:
        height = float(re.match(r'width="[-\d.e]+" height="([-\d.e]+)"', page).group(1))
        lines, runs = [], []
        for box, line in re.findall(r"<line (.*?)>(.*?)</line>", page, re.S):
            top, bottom = (float(v) for v in re.findall(r'y(?:Min|Max)="([-\d.e]+)"', box))
            found = _WORD.findall(line)
            lines.append(" ".join(html.unescape(w) for *_, w in found))
            for x, word_top, word_bottom, word in found:
                size = float(word_bottom) - float(word_top)
                runs.append((float(x), height - (top + bottom) / 2, html.unescape(word), size))
        texts.append("\n".join(lines))
        words.append(runs)
    return texts, words


def _extracted(path: Path):
    """``_extract(path)``, done once per PDF for all test workers: pytest-xdist
    may set this module's fixture up in both workers. The result is kept beside the PDF under the
    digest of its bytes (a rebuilt PDF is read again), and a lock makes the
    second worker wait for the first instead of reading it too."""
    import fcntl

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    cache = path.with_name(f".{path.stem}.words-{digest[:16]}.pickle")
    with open(path.with_name(f".{path.stem}.text.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cache.exists():
            return pickle.loads(cache.read_bytes())
        extracted = _extract(path)
        for old in path.parent.glob(f".{path.stem}.*-*.pickle"):
            old.unlink()
        cache.write_bytes(pickle.dumps(extracted))
        return extracted


@pytest.fixture(scope="module", params=EDITIONS)
def book(request):
    from pypdf import PdfReader

    path = _pdf(request.param)
    texts, LINES[path] = _extracted(path)
    TEXTS[path] = texts
    return request.param, path, PdfReader(path), "\n".join(texts)


# Per PDF, per page: its text, and its words as (x, y, text, height in
# points), y (the middle of the word's line) upwards from the foot.
TEXTS: dict[Path, list[str]] = {}
LINES: dict[Path, list[list[tuple[float, float, str, float]]]] = {}


def _outline_titles(outline) -> list[str]:
    titles = []
    for item in outline:
        if isinstance(item, list):
            titles += _outline_titles(item)
        else:
            titles.append(item.title)
    return titles


# The simplified radicals that are also whole characters, as their ideographs.
SIMPLIFIED_RADICALS = str.maketrans(
    "\u2ec5\u2ec6\u2ec9\u2ecb\u2ed3\u2ed4\u2eda\u2edb\u2edc\u2ee2\u2ee5\u2ee6\u2ee8\u2ee9\u2eec\u2eee\u2ef0\u2ef3",
    "见角贝车长门页风飞马鱼鸟麦黄齐齿龙龟",
)


def _squash(text: str) -> str:
    # NFKC: Chromium's Chinese text extracts partly as CJK radicals
    # (U+2F29 for 小), which NFKC maps back to the ideographs; the simplified
    # radicals of U+2E80-2EFF (U+2EC5 for 见) have no such mapping, so they
    # are mapped here.
    text = unicodedata.normalize("NFKC", text).translate(SIMPLIFIED_RADICALS)
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


def site_headings(edition: str) -> list[tuple[int, list[tuple[str, str]]]]:
    """The headings of every page of ``edition`` in _toc.yml order, as the
    built site shows them: (level, pieces), the page's title at level 0, its
    sections at 1, and so on; pieces: ("text" | "code" | "math", source)."""
    site = HTML if edition == "en" else HTML / edition
    headings = []
    for page in toc_pages():
        built = (site / page.with_suffix(".html")).read_text("utf8")
        article = built[built.index("<article") : built.index("</article>")]
        for match in re.finditer(r"<h([1-6])[^>]*>(.*?)</h\1>", article, re.S):
            inner = re.sub(r'<a class="headerlink".*?</a>', "", match.group(2), flags=re.S)
            pieces = []
            for part in re.split(
                r'(<span class="math[^"]*">.*?</span>|<code[^>]*>.*?</code>)', inner, flags=re.S
            ):
                kind = (
                    "math"
                    if part.startswith('<span class="math')
                    else "code"
                    if part.startswith("<code")
                    else "text"
                )
                words = html.unescape(re.sub(r"<[^>]+>", "", part))
                if words.strip():
                    pieces.append((kind, words))
            headings.append((int(match.group(1)) - 1, pieces))
    return headings


def _title_pattern(pieces: list[tuple[str, str]]) -> re.Pattern:
    """A bookmark title made of ``pieces``: words and code exactly (any
    spacing), math as any short text (MathJax's words for it)."""
    parts = [
        r".{1,30}?" if kind == "math" else r"\s*".join(re.escape(word) for word in words.split())
        for kind, words in pieces
    ]
    return re.compile(r"\s*".join(parts))


def _outline(reader, outline=None, level=0) -> list[tuple[int, str, int, float]]:
    """The bookmarks in order: (level, title, page index, top)."""
    items = []
    for item in reader.outline if outline is None else outline:
        if isinstance(item, list):
            items += _outline(reader, item, level + 1)
        else:
            items.append(
                (level, item.title, reader.get_destination_page_number(item), float(item.top))
            )
    return items


def test_bookmarks_follow_the_contents_and_are_not_doubled(book):
    """Bookmarks: "Contents", then each page of _toc.yml in order with its
    sections and subsections, titled as the site titles them, none doubled."""
    edition, path, reader, text = book
    outline = _outline(reader)
    doubled = [t for _, t, _, _ in outline if re.search(r"(\S.{2,}?)\s*\1", t)]
    assert not doubled, f"{path.name}: doubled bookmark titles: {doubled}"
    assert outline[0][:3] == (0, CONTENTS[edition], 1), f"{path.name}: {outline[0]}"
    expected = site_headings(edition)
    got = [(level, title) for level, title, _, _ in outline[1:]]
    for n, ((level, pieces), (got_level, title)) in enumerate(zip(expected, got, strict=False)):
        assert got_level == level and _title_pattern(pieces).fullmatch(title), (
            f"{path.name}: bookmark {n + 1} is {title!r} at level {got_level}; the site "
            f"has {''.join(w for _, w in pieces)!r} at level {level}"
        )
    assert len(got) == len(expected), (
        f"{path.name}: {len(got)} bookmarks after the contents, the site has "
        f"{len(expected)} headings"
    )


def _printed_near(path: Path, page: int, top: float) -> str:
    """The text printed on ``page`` from ``top`` down to 130 pt below it (a
    heading's destination is the top of its box, margin included)."""
    lines: list[list] = []  # top down; words whose middles are this close share a line
    for run in sorted(LINES[path][page], key=lambda r: -r[1]):
        if lines and lines[-1][0][1] - run[1] < 0.4 * run[3]:
            lines[-1].append(run)
        else:
            lines.append([run])
    runs = [run for line in lines for run in sorted(line)]  # each line left to right
    return _squash("".join(t for x, y, t, _ in runs if top - 130 <= y <= top + 2))


def test_each_bookmark_is_at_its_heading(book):
    """Each bookmark's page and place show its heading (not, say, the foot
    of the page before, where a section may begin)."""
    edition, path, reader, text = book
    headings = site_headings(edition)
    misplaced = []
    for (_, title, page, top), (_, pieces) in zip(_outline(reader)[1:], headings, strict=False):
        near = _printed_near(path, page, top)
        words = [_squash(w) for kind, w in pieces if kind != "math"]
        if not all(w in near for w in words):
            misplaced.append(f"{title!r} on page {page + 1}: {near[:60]!r}")
    assert not misplaced, f"{path.name}: bookmarks not at their headings: {misplaced}"


def test_no_heading_ends_its_page(book):
    """Text follows every heading on its page (the print keeps a heading
    with what comes after it); the footer (page numbers) is not text after."""
    edition, path, reader, text = book
    alone = []
    for (_, title, page, top), (_, pieces) in zip(
        _outline(reader)[1:], site_headings(edition), strict=False
    ):
        whole = _squash("".join(w for kind, w in pieces if kind != "math"))
        runs = LINES[path][page]
        # The heading's own lines: its words near its place, in its type (the
        # largest among those words there).
        near = [
            (y, size)
            for x, y, t, size in runs
            if top - 130 <= y <= top + 2 and _squash(t) and _squash(t) in whole
        ]
        assert near, f"{path.name}: heading {title!r} not found on page {page + 1}"
        own = [y for y, size in near if size > 0.95 * max(s for _, s in near)]
        if not any(FOOTER_TOP < y < min(own) - 4 for x, y, t, _ in runs):
            alone.append(f"{title!r} (page {page + 1})")
    assert not alone, f"{path.name}: headings with nothing after them on their page: {alone}"


def test_contents_page_numbers_are_the_headings_pages(book):
    """Each line of the contents is a link to its heading; the number printed
    at its right end is the page the heading is on, and the lines are the
    chapters and sections of the bookmarks, in order."""
    edition, path, reader, text = book
    entries = []
    for index in range(1, min(12, len(reader.pages))):
        page = reader.pages[index]
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            dest = str(annot.get("/Dest", ""))
            if not dest.startswith("/pdf-h-"):
                continue
            x0, y0, x1, y1 = (float(v) for v in annot["/Rect"])
            inside = [
                (x, t)
                for x, y, t, _ in LINES[path][index]
                if y0 - 1 <= y <= y1 + 1 and x0 - 1 <= x <= x1 + 1
            ]
            number = max(inside)[1].strip() if inside else ""
            target = reader.named_destinations[dest]
            entries.append(
                (index + 1, number, reader.get_destination_page_number(target), float(target.top))
            )
    assert len(entries) > 20, f"{path.name}: {len(entries)} lines in the contents"
    wrong = [
        f"page {at}: {number!r} for a heading on page {page + 1}"
        for at, number, page, _ in entries
        if number != str(page + 1)
    ]
    assert not wrong, f"{path.name}: contents numbers that are not their headings' pages: {wrong}"
    chapters_and_sections = [
        (page, round(top)) for level, _, page, top in _outline(reader)[1:] if level <= 1
    ]
    assert [(page, round(top)) for _, _, page, top in entries] == chapters_and_sections


def test_printed_pages_load_nothing_from_the_network(book):
    """The single pages that were printed name no resource on another host
    (bookbuild/pdf.py also refuses any such request while printing)."""
    edition, path, reader, text = book
    single = ROOT / "_build" / ("singlehtml" if edition == "en" else f"{edition}/singlehtml")
    page = (single / "index.html").read_text("utf8")
    remote = []
    for tag in re.findall(r"<(?:script|img|iframe|source|video|audio|link)\b[^>]*>", page):
        url = re.search(r"""\b(?:src|href)=["']((?:https?:)?//[^"']*)""", tag)
        fetched = not tag.startswith("<link") or re.search(
            r"""\brel=["'][^"']*\b(?:stylesheet|preload|modulepreload|icon)\b""", tag
        )
        if url and fetched:
            remote.append(url.group(1))
    remote += re.findall(r"""url\(\s*["']?((?:https?:)?//[^"')]*)""", page)
    assert not remote, f"{single.relative_to(ROOT)}/index.html loads {remote}"


def test_every_chapter_title_is_in_the_book(book):
    edition, path, reader, text = book
    outline = _squash(" ".join(_outline_titles(reader.outline)))
    body = _squash(text)
    missing = [
        t for t in chapter_titles(edition) if _squash(t) not in outline and _squash(t) not in body
    ]
    assert not missing, f"{path.name}: chapter titles not found: {missing}"
    assert reader.outline, f"{path.name} has no bookmarks"


def test_document_information_names_the_book(book):
    """A reader's window shows the book's title and edition, not a file name."""
    edition, path, reader, text = book
    title = reader.metadata.title if reader.metadata else None
    assert title and title.startswith(chapter_titles(edition)[0]), f"{path.name}: title {title!r}"


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
    with_code = [n for n, words in enumerate(TEXTS[path], 1) if n > 3 and "tf." in words]
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


def test_every_page_is_numbered_in_its_footer(book):
    """Each page's footer reads "n / total"."""
    edition, path, reader, text = book
    total = len(TEXTS[path])
    wrong = [n for n, words in enumerate(TEXTS[path], 1) if f"{n} / {total}" not in words]
    assert not wrong, f"{path.name}: pages without their 'n / {total}' footer: {wrong}"


def test_the_pdf_is_tagged_in_its_language(book):
    """Chromium's tags stay in the book: a structure tree for screen
    readers, marked content, and the edition's language."""
    edition, path, reader, text = book
    root = reader.trailer["/Root"]
    assert "/StructTreeRoot" in root, f"{path.name} has no structure tree"
    # (== True: pypdf's BooleanObject(False) is truthy)
    marked = root.get("/MarkInfo", {}).get("/Marked") == True  # noqa: E712
    assert marked, f"{path.name} is not marked"
    lang = {"en": "en", "zh_CN": "zh-CN"}[edition]
    assert root.get("/Lang") == lang, f"{path.name}: /Lang is {root.get('/Lang')!r}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_site_links_both_pdfs(edition):
    """The index page of each edition (the Chinese one also as published in
    the English site) links both PDFs, and the site serves what it links."""
    from bookbuild import pdf_links

    _pdf(edition)
    for page in pdf_links.index_pages(ROOT / "_build")[edition]:
        notes = re.findall(r'<p class="matgrad-book-pdfs">.*?</p>', page.read_text("utf8"), re.S)
        assert len(notes) == 1, f"{page.relative_to(ROOT)}: {len(notes)} notes with the PDF links"
        links = re.findall(r'href="([^"]+)"', notes[0])
        assert len(links) == len(EDITIONS), links
        if not page.is_relative_to(HTML):
            continue  # the Chinese site before it is published at zh_CN/ (same page)
        for link in links:
            served = (page.parent / link).resolve()
            assert served.is_file() and served.parent == HTML, f"{page}: {link}"
            assert served.read_bytes() == (PDF_DIR / served.name).read_bytes()


def test_bookmarks_nest_by_level_after_the_print_unchanged():
    """`with_bookmarks` on a small PDF: the print's bytes come first,
    unchanged (pypdf's incremental update follows them); "Contents" leads;
    a heading nests under the last one of the level above (a subsection
    with no section before it goes under its chapter); chapters are closed."""
    from pypdf import PdfReader, PdfWriter

    from bookbuild.pdf import with_bookmarks

    writer = PdfWriter()
    for _ in range(3):
        writer.add_blank_page(*A4_POINTS)
    printed = io.BytesIO()
    writer.write(printed)
    entries = [
        {"marker": "a", "title": "One", "level": 0},
        {"marker": "b", "title": "One.1", "level": 1},
        {"marker": "c", "title": "One.1.1", "level": 2},
        {"marker": "d", "title": "Two", "level": 0},
        {"marker": "e", "title": "Two.?.1", "level": 2},
    ]
    places = {"pdf-contents": (0, 0.0, 800.0), "a": (1, 0.0, 700.0), "b": (1, 0.0, 500.0)}
    places |= {"c": (2, 0.0, 800.0), "d": (2, 0.0, 400.0), "e": (2, 0.0, 200.0)}
    info = {"contents": "Contents", "title": "T (E)", "author": "A"}
    data = with_bookmarks(printed.getvalue(), entries, places, info)
    assert data.startswith(printed.getvalue())
    reader = PdfReader(io.BytesIO(data), strict=True)
    outline = [(level, title, page, round(top)) for level, title, page, top in _outline(reader)]
    assert outline == [
        (0, "Contents", 0, 800),
        (0, "One", 1, 700),
        (1, "One.1", 1, 500),
        (2, "One.1.1", 2, 800),
        (0, "Two", 2, 400),
        (1, "Two.?.1", 2, 200),
    ]
    counts = [item.get("/Count", 0) for item in reader.outline if not isinstance(item, list)]
    assert counts == [0, -2, -1], "chapters closed (a negative count), sections open"
    assert (reader.metadata.title, reader.metadata.author) == ("T (E)", "A")
    assert reader.trailer["/Root"]["/PageMode"] == "/UseOutlines"

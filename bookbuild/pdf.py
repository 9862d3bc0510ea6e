"""`make pdf`: the whole book as one PDF per edition, printed by Chromium.

    .venv/bin/python -m bookbuild.pdf      (after `make book`)

writes `_build/pdf/matgrad-en.pdf` and `_build/pdf/matgrad-zh_CN.pdf`:

1. Sphinx's `singlehtml` builder writes each edition as one page
   (`_build/singlehtml/`, `_build/zh_CN/singlehtml/`), through the editions of
   `bookbuild/build_site.py`: the same configuration, doctrees and execution cache
   as the site, so no page is read or run again.
2. Debian's Chromium (the one the browser tests use), driven by Playwright,
   opens each page over a local HTTP server (MathJax loads its fonts, which a
   `file://` page may not; any request that is not to that server is refused
   and fails the build), waits until MathJax has typeset every formula, adds
   a cover and a contents page, and prints it (A4) with `book-print.css` as a
   tagged PDF. Links between pages are links inside the single page, so they
   stay links inside the PDF. Chinese text is set in the Noto CJK fonts the
   machine has (fonts-noto-cjk); Chromium embeds the glyphs it uses.
   Chromium's print has no `target-counter()`, so the contents' page numbers
   take a second print, of the contents pages alone: the book's print says
   (by its named destinations) on which page each heading landed, those
   numbers go into the contents' boxes (of fixed width: they held a
   placeholder in the first print), and those pages' new text and fonts
   replace theirs in the book's print. That those pages have the same size,
   links and marked content (which the structure tags point to) in both
   prints is checked, not assumed (`splice_check`; if not, the whole book is
   printed again), and tests/test_pdf.py compares their text, digits aside.
   The bookmarks (PDF outline) are then written from the headings
   themselves: the contents page, each chapter, its sections and their
   subsections.
3. The English site gets both PDFs at its top, and the index page of each
   edition a line that links them (`bookbuild/pdf_links.py`, in the HTML
   Sphinx wrote: no Sphinx run).

Nothing here uses the network; a missing Chromium is an error that says what
to install. When nothing changed since the last `make pdf` (the site, this
file, the style sheet, the browser), it does nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import hashlib
import http.server
import io
import itertools
import logging
import re
import shutil
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from bookbuild import chromium as chromium_flags
from bookbuild import pdf_links

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


# Runs in the page before printing; returns the book's headings, in order.
#
# - A cover in front of the book, then a contents page built here (the theme's
#   own print-only contents is hidden): the part captions of _toc.yml, each
#   chapter and its sections, each line a link to its heading, with an empty
#   box of fixed width for the page number, which `print_edition` fills.
# - Every heading gets an empty marker, `pdf-h-<n>`, as its first child, and
#   a (hidden) link to it: Chromium writes a named destination for every
#   element a link of the page points to, so the printed PDF says on which
#   page each heading landed. The ids that links of the book point to (a
#   section's, a label's, a chapter's `document-...`) move onto the section's
#   heading too, so that such a link lands on the heading.
# - A heading and what follows it go into one box that does not break, if
#   that is short, or the heading's box leaves room for a few lines after it
#   (book-print.css says why not `break-after: avoid`). Measured in the
#   print style at the A4 text width (the page's viewport).
# - A table wider than the text gets a smaller type until it fits (its
#   cells wrap; math and long code may not).
# - Dropdowns (the exercises' solutions) are open, as the theme prints them.
#   The theme opens them on "beforeprint" and closes them on "afterprint";
#   the page is printed more than once, so they are opened here, once, and
#   those handlers are kept out: every print is of the same page.
# - The index page's title is a chapter title among the others (h2 on the
#   single page, as the other chapters' titles are).
# - Links written as "index.html#x" point into this same page: they become
#   "#x", so that the PDF has them as links inside it.
PREPARE_JS = """([title, author, edition, contentsWord]) => {
  const KEEP_WITH_NEXT_PX = 300;  // about a third of the A4 text height
  for (const type of ['beforeprint', 'afterprint'])
    window.addEventListener(type, e => e.stopImmediatePropagation(), true);
  document.querySelectorAll('.admonition.toggle.toggle-hidden').forEach(
    e => e.querySelector('button.toggle-button').click());
  document.querySelectorAll('details').forEach(e => { e.open = true; });
  const main = document.querySelector('article.bd-article');
  // A table wider than the text (math and long code do not wrap) gets a
  // smaller type until it fits.
  main.querySelectorAll('table').forEach(t => {
    const fits = () => t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1;
    for (let size = 80; size >= 60 && !fits(); size -= 5) t.style.fontSize = size + '%';
  });
  const printBody = document.querySelector('#jb-print-docs-body');
  const cover = document.createElement('section');
  cover.className = 'book-cover';
  for (const [cls, text] of [['title', title], ['edition', edition], ['author', author]]) {
    const p = document.createElement('p');
    p.className = 'book-cover__' + cls;
    p.textContent = text;
    cover.appendChild(p);
  }
  // The parts of _toc.yml, from the theme's contents: caption -> first chapter.
  const parts = new Map();
  printBody.querySelectorAll('#jb-print-toc p.caption').forEach(p => {
    const chapterList = p.nextElementSibling;
    const firstLink = chapterList && chapterList.querySelector('a[href*="#document-"]');
    if (firstLink) parts.set(firstLink.getAttribute('href').split('#')[1], p.textContent.trim());
  });
  const first = main.querySelector('h1');
  const h2 = document.createElement('h2');
  h2.innerHTML = first.innerHTML;
  first.replaceWith(h2);
  // The chapters: the index page's section, and each page's after its marker.
  const chapters = new Map([[h2.closest('section'), null]]);
  main.querySelectorAll('span[id^="document-"] + section').forEach(
    s => chapters.set(s, s.previousElementSibling.id));
  chapters.forEach((doc, s) => s.classList.add('book-chapter'));
  h2.closest('section').classList.add('book-chapter--first');
  const plain = heading => {
    const copy = heading.cloneNode(true);
    copy.querySelectorAll('.headerlink').forEach(e => e.remove());
    // Math as the words MathJax gives screen readers (its MathML's text).
    copy.querySelectorAll('mjx-container').forEach(m => {
      const mml = m.querySelector('mjx-assistive-mml');
      m.replaceWith(mml ? mml.textContent : m.textContent);
    });
    return copy.textContent.replace(/\\s+/g, ' ').trim();
  };
  // The first text a reader sees in an element (not MathJax's hidden MathML).
  const firstText = element => document.createTreeWalker(element, NodeFilter.SHOW_TEXT, {
    acceptNode: t => t.textContent.trim() && t.parentElement.getClientRects().length
      && !t.parentElement.closest('mjx-assistive-mml, .headerlink, script, style')
      ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP}).nextNode();
  const headings = [];
  main.querySelectorAll('section').forEach(section => {
    const heading = section.querySelector(':scope > :is(h1, h2, h3, h4, h5, h6)');
    if (!heading) return;
    const chapter = section.closest('.book-chapter');
    let level = 0;
    for (let s = section; s !== chapter; s = s.parentElement.closest('section')) level++;
    // (measured before anything moves: one layout)
    const next = heading.nextElementSibling;
    const short = next !== null && next.getBoundingClientRect().height < KEEP_WITH_NEXT_PX;
    const doc = chapters.has(section) ? chapters.get(section) : undefined;
    const text = next && !short ? firstText(next) : null;
    headings.push({heading, section, level, doc, title: plain(heading), next, short, text});
  });
  const hidden = document.createElement('div');
  hidden.className = 'book-destinations';
  const link = id => { const a = document.createElement('a'); a.href = '#' + id; return a; };
  const entries = headings.map(({heading, section, level, doc, title, next, short, text}, n) => {
    // Everything a link may point at lands on the heading itself.
    const moved = [];
    for (let e = section.previousElementSibling; e && e.tagName === 'SPAN' && e.id
         && !e.textContent && !e.children.length; e = e.previousElementSibling) moved.push(e);
    moved.forEach(e => heading.prepend(e));
    if (section.id && !heading.id) { heading.id = section.id; section.removeAttribute('id'); }
    const marker = document.createElement('span');
    marker.id = 'pdf-h-' + n;
    marker.className = 'book-marker';
    heading.prepend(marker);
    hidden.appendChild(link(marker.id));
    // A heading stays with what follows it (see book-print.css): in one box
    // with it when that is short (a paragraph, a list, a small cell),
    // else with room for a few lines below it.
    const keep = document.createElement('div');
    keep.className = 'book-keep';
    heading.before(keep);
    keep.append(heading);
    if (short) keep.append(next);
    else keep.classList.add('book-keep--room');
    // ... and a marker before the first text after it, which tells whether
    // that text made it onto the heading's page.
    let after = null;
    if (text) {
      const m = document.createElement('span');
      m.id = after = 'pdf-a-' + n;
      m.className = 'book-marker';
      text.before(m);
      hidden.appendChild(link(m.id));
    }
    return {marker: marker.id, after, title, level, chapter: doc !== undefined, doc};
  });
  // The contents: chapters and their sections (the bookmarks have one level more).
  const contents = document.createElement('nav');
  contents.className = 'book-contents';
  contents.id = 'pdf-contents';
  hidden.appendChild(link(contents.id));
  const head = document.createElement('p');
  head.className = 'book-contents__title';
  head.textContent = contentsWord;
  const list = document.createElement('ol');
  contents.append(head, list);
  headings.forEach(({heading, level, doc}, n) => {
    if (level > 1) return;
    if (doc && parts.has(doc)) {
      const part = document.createElement('li');
      part.className = 'book-contents__part';
      part.textContent = parts.get(doc);
      list.appendChild(part);
    }
    const item = document.createElement('li');
    item.className = 'book-contents__level-' + level;
    const a = link(entries[n].marker);
    const text = document.createElement('span');
    text.className = 'book-contents__text';
    const copy = heading.cloneNode(true);
    copy.querySelectorAll('.headerlink, .book-marker').forEach(e => e.remove());
    copy.querySelectorAll('[id]').forEach(e => e.removeAttribute('id'));
    text.append(...copy.childNodes);
    const leader = document.createElement('span');
    leader.className = 'book-contents__leader';
    const page = document.createElement('span');
    page.className = 'book-contents__page';
    page.dataset.marker = entries[n].marker;
    a.append(text, leader, page);
    item.appendChild(a);
    list.appendChild(item);
  });
  printBody.parentElement.insertBefore(cover, printBody);
  printBody.parentElement.insertBefore(contents, printBody);
  document.body.appendChild(hidden);
  document.querySelectorAll('a[href^="index.html#"]').forEach(
    a => a.setAttribute('href', a.getAttribute('href').slice('index.html'.length)));
  return entries;
}"""

# What would be cut at the right margin: code, outputs, tables, displayed
# math, figures wider than the text (measured at the A4 text width).
OVERFLOW_JS = """() => {
  const main = document.querySelector('article.bd-article');
  const right = main.getBoundingClientRect().right;
  return Array.from(main.querySelectorAll(
      'pre, table, mjx-container[display="true"], img, svg, figure, .cell_output, .output'))
    .filter(e => e.getBoundingClientRect().right > right + 1 || e.scrollWidth > e.clientWidth + 1
                 && getComputedStyle(e).overflowX !== 'visible')
    .map(e => e.tagName.toLowerCase() + ': ' + e.textContent.trim().slice(0, 60));
}"""

# A page break before these headings (their keep boxes).
BREAK_JS = """(markers) => markers.forEach(
  m => document.getElementById(m).closest('.book-keep').classList.add('book-keep--break'))"""

# The page numbers into the contents (then printed again: `print_edition`).
FILL_JS = """(pages) => document.querySelectorAll('.book-contents__page').forEach(
  e => { e.textContent = pages[e.dataset.marker]; })"""

# Hide (true) or show again (false) everything that follows the contents.
CONTENTS_ONLY_JS = """(hide) => {
  for (let e = document.getElementById('pdf-contents'); e !== document.body; e = e.parentElement)
    for (let s = e.nextElementSibling; s; s = s.nextElementSibling)
      s.classList.toggle('book-hidden', hide);
}"""

# The page's viewport is as wide as A4's text (210 mm less 2 x 15 mm margins,
# in CSS pixels), so that what PREPARE_JS measures is as it will be printed.
VIEWPORT = {"width": round((210 - 2 * 15) / 25.4 * 96), "height": 1000}
FOOTER = (
    '<div style="font-size:8px; width:100%; text-align:center; color:#555">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)
PDF_OPTIONS = dict(
    format="A4",
    print_background=True,
    margin={"top": "16mm", "bottom": "16mm", "left": "15mm", "right": "15mm"},
    display_header_footer=True,
    header_template="<span></span>",
    footer_template=FOOTER,
    # Chromium's own bookmarks (outline=True) take a heading's title from the
    # text it draws for it: they lose the space at each line break and all
    # math, and (with the theme's `break-after: avoid`, see book-print.css)
    # a heading moved to the next page was drawn on both pages, its bookmark
    # doubled. The bookmarks are written from the headings instead
    # (`write_book`). Tagged: the PDF keeps its structure for screen readers.
    outline=False,
    tagged=True,
)
PASSES = 4  # prints of the book until no heading stands alone at a page's foot
# pypdf warns about the object count in Chromium's trailer, which is harmless.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def destinations(data: bytes, names: list[str]) -> tuple[dict[str, tuple[int, float, float]], int]:
    """Where Chromium put each named destination: (page index, left, top) in
    points; and the number of pages."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    found = {}
    for name, dest in reader.named_destinations.items():
        found[str(name).lstrip("/")] = (
            reader.get_destination_page_number(dest),
            float(dest.left or 0),
            float(dest.top or 0),
        )
    missing = [n for n in names if n not in found]
    if missing:
        raise RuntimeError(
            f"Chromium wrote no destination for {len(missing)} headings ({missing[:5]}...)"
        )
    return {n: found[n] for n in names}, len(reader.pages)


def write_book(
    data: bytes,
    path: Path,
    entries: list[dict],
    places: dict,
    contents: str,
    info: dict[str, str],
    numbered: tuple[bytes, int] | None = None,
) -> int:
    """The printed PDF, with bookmarks: the contents page, then each chapter
    (closed) with its sections and their subsections, each at its heading;
    and ``info`` (title, author) in its document information. ``numbered``
    is a print of the contents pages alone with their page numbers, and the
    index of its first page in ``data``: those pages' text and fonts replace
    the ones printed with placeholders (`splice_check` has shown that they
    match). Returns the number of pages.

    Written as an incremental update (PDF 1.7, 7.5.6): Chromium's PDF byte for
    byte, then the outline's objects, a new catalog that names them, the new
    document information, the contents pages' new text and fonts, and a
    cross-reference section for just those. (pypdf's own incremental writer
    copies all 40,000 objects of the tagged PDF first, which took longer than
    printing it.)"""
    from pypdf import PdfReader
    from pypdf.generic import (
        ArrayObject,
        DictionaryObject,
        EncodedStreamObject,
        FloatObject,
        IndirectObject,
        NameObject,
        NullObject,
        NumberObject,
        StreamObject,
        TextStringObject,
    )

    reader = PdfReader(io.BytesIO(data))
    previous = int(data[data.rindex(b"startxref") :].split()[1])
    if not data.startswith(b"xref", previous):
        raise RuntimeError("Chromium's PDF has no classic cross-reference table to update")
    root = reader.trailer.raw_get("/Root")
    old_info = reader.trailer.raw_get("/Info") if "/Info" in reader.trailer else None
    if root.generation or (old_info and old_info.generation):
        raise RuntimeError("Chromium's catalog or information has a generation other than 0")
    size = int(reader.trailer["/Size"])

    # The outline as a tree: (title, marker, children, open), then numbered.
    tree = [(contents, "pdf-contents", [], False)]
    parents = []
    for entry in entries:
        level = min(entry["level"], len(parents))
        node = (entry["title"], entry["marker"], [], level > 0)
        (parents[level - 1][2] if level else tree).append(node)
        parents[level:] = [node]
    objects = {}  # object number -> its dictionary
    outlines = size
    size += 1

    def number(nodes):
        nonlocal size
        numbered = []
        for node in nodes:
            numbered.append((size, node))
            size += 1
        return numbered

    def visible(node):  # the items shown below an open item (PDF's /Count)
        return sum(1 + (visible(c) if c[3] else 0) for c in node[2])

    def ref(num):
        return IndirectObject(num, 0, reader)

    def items(nodes, parent):
        numbered = number(nodes)
        for i, (num, (title, marker, children, is_open)) in enumerate(numbered):
            page, left, top = places[marker]
            item = DictionaryObject(
                {
                    NameObject("/Title"): TextStringObject(title),
                    NameObject("/Parent"): ref(parent),
                    NameObject("/Dest"): ArrayObject(
                        [
                            reader.pages[page].indirect_reference,
                            NameObject("/XYZ"),
                            FloatObject(left),
                            FloatObject(top),
                            NullObject(),
                        ]
                    ),
                }
            )
            if i:
                item[NameObject("/Prev")] = ref(numbered[i - 1][0])
            if i + 1 < len(numbered):
                item[NameObject("/Next")] = ref(numbered[i + 1][0])
            if children:
                first, last = items(children, num)
                item[NameObject("/First")], item[NameObject("/Last")] = ref(first), ref(last)
                count = visible((title, marker, children, True))
                item[NameObject("/Count")] = NumberObject(count if is_open else -count)
            objects[num] = item
        return numbered[0][0], numbered[-1][0]

    first, last = items(tree, outlines)
    objects[outlines] = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Outlines"),
            NameObject("/First"): ref(first),
            NameObject("/Last"): ref(last),
            NameObject("/Count"): NumberObject(visible(("", "", tree, True))),
        }
    )
    catalog = DictionaryObject(reader.trailer["/Root"])
    catalog[NameObject("/Outlines")] = ref(outlines)
    catalog[NameObject("/PageMode")] = NameObject("/UseOutlines")
    objects[root.idnum] = catalog
    document = DictionaryObject(reader.trailer["/Info"] if old_info else {})
    document.update({NameObject(k): TextStringObject(v) for k, v in info.items()})
    info_num = old_info.idnum if old_info else size
    size = max(size, info_num + 1)
    objects[info_num] = document
    if numbered is not None:
        # Each contents page keeps its own dictionary (its place in the page
        # tree, its structure and its links) with the other print's content
        # stream and resources (fonts), copied in as new objects.
        other, first_page = numbered
        source = PdfReader(io.BytesIO(other))
        copied: dict[int, int] = {}

        def copy(obj):
            nonlocal size
            if isinstance(obj, IndirectObject):
                if obj.idnum not in copied:
                    copied[obj.idnum] = size
                    size += 1
                    objects[copied[obj.idnum]] = copy(obj.get_object())
                return ref(copied[obj.idnum])
            if isinstance(obj, DictionaryObject):
                if obj.get("/Type") in ("/Page", "/Pages", "/Catalog"):
                    raise RuntimeError("a contents page's resources refer to a page")
                new = EncodedStreamObject() if isinstance(obj, StreamObject) else DictionaryObject()
                if isinstance(obj, StreamObject):
                    new._data = obj._data  # as printed (still compressed)
                new.update({key: copy(value) for key, value in obj.items()})
                for key in ("/BaseFont", "/FontName"):
                    if key in new:
                        new[NameObject(key)] = retag(new[key])
                return new
            if isinstance(obj, ArrayObject):
                return ArrayObject(copy(value) for value in obj)
            return obj

        # A font subset's name starts with a tag of six capitals that must
        # differ from every other subset's in the file (ISO 32000-1, 9.6.4);
        # each print numbers its own from AAAAAA.
        used = set(re.findall(rb"/([A-Z]{6})\+", data))
        spare = (t for t in map(bytes, itertools.product(b"ZYXWVU", repeat=6)) if t not in used)
        tags: dict[str, str] = {}

        def retag(name):
            tag, plus, rest = str(name).lstrip("/").partition("+")
            if not plus or len(tag) != 6 or not tag.isupper():
                return name
            tags.setdefault(tag, next(spare).decode())
            return NameObject(f"/{tags[tag]}+{rest}")

        for offset, new_page in enumerate(source.pages):
            old_ref = reader.pages[first_page + offset].indirect_reference
            if old_ref.generation:
                raise RuntimeError("a contents page has a generation other than 0")
            page = DictionaryObject(reader.pages[first_page + offset])
            for key in ("/Contents", "/Resources"):
                page[NameObject(key)] = copy(new_page.raw_get(key))
            objects[old_ref.idnum] = page

    out = io.BytesIO()
    out.write(data if data.endswith(b"\n") else data + b"\n")
    offsets = {}
    for num, obj in sorted(objects.items()):
        offsets[num] = out.tell()
        out.write(f"{num} 0 obj\n".encode())
        obj.write_to_stream(out)
        out.write(b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 1\n0000000000 65535 f\r\n")
    numbers = sorted(offsets)
    while numbers:  # subsections of consecutive object numbers
        run = 1
        while run < len(numbers) and numbers[run] == numbers[0] + run:
            run += 1
        out.write(f"{numbers[0]} {run}\n".encode())
        for num in numbers[:run]:
            out.write(f"{offsets[num]:010d} 00000 n\r\n".encode())
        numbers = numbers[run:]
    trailer = DictionaryObject(
        {
            NameObject("/Size"): NumberObject(size),
            NameObject("/Root"): ref(root.idnum),
            NameObject("/Info"): ref(info_num),
            NameObject("/Prev"): NumberObject(previous),
        }
    )
    if "/ID" in reader.trailer:
        trailer[NameObject("/ID")] = reader.trailer["/ID"]
    out.write(b"trailer\n")
    trailer.write_to_stream(out)
    out.write(f"\nstartxref\n{xref}\n%%EOF\n".encode())
    path.write_bytes(out.getvalue())
    return len(reader.pages)


# What the contents pages' resources may hold to be copied into the book: no
# link into the other print's structure tree, page tree or optional content.
SPLICE_TYPES = {None, "/Font", "/FontDescriptor", "/Encoding", "/XObject", "/ExtGState", "/Pattern"}
SPLICE_FORBIDDEN = {"/StructParent", "/StructParents", "/OC", "/Parent", "/P", "/Pg"}
# A marked-content operator with its tag and properties (which may hold strings).
MARKED = re.compile(rb"/[^\s/<>\[\]()]+\s*(?:<<.*?>>|/[^\s/<>\[\]()]+)?\s*B[DM]C", re.S)


def splice_check(book: bytes, numbered: bytes, first: int, end: int) -> str | None:
    """Why the print ``numbered`` of the book's pages ``first`` to ``end - 1``
    (indices) cannot lend those pages' content streams and resources to the
    print ``book``, or None. Compared: the number of pages, each page's size,
    its links (places within 0.05 pt, destinations, actions), and its
    marked-content operators in order with their tags and properties (MCIDs),
    so that the book's structure tree fits the new content; and the new
    resources must not point into the other print (`SPLICE_TYPES`,
    `SPLICE_FORBIDDEN`). Not compared here: the text itself, which
    tests/test_pdf.py compares with the book's first print, digits aside."""
    from pypdf import PdfReader
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    ours, theirs = PdfReader(io.BytesIO(book)), PdfReader(io.BytesIO(numbered))
    if len(theirs.pages) != end - first:
        return f"{len(theirs.pages)} contents pages printed, {end - first} expected"

    def links(page):
        return [a.get_object() for a in page.get("/Annots") or []]

    def same_link(a, b):
        return (
            all(
                abs(float(x) - float(y)) <= 0.05
                for x, y in zip(a["/Rect"], b["/Rect"], strict=True)
            )
            and a.get("/Dest") == b.get("/Dest")
            and a.get("/A") == b.get("/A")
        )

    def foreign(obj, seen):
        """The first thing in ``obj`` that may not be copied, or None."""
        if isinstance(obj, IndirectObject):
            if obj.idnum in seen:
                return None
            seen.add(obj.idnum)
            obj = obj.get_object()
        if isinstance(obj, DictionaryObject):
            kind = obj.get("/Type")
            if kind not in SPLICE_TYPES or SPLICE_FORBIDDEN & set(obj):
                return f"a {kind or 'dictionary'} with {sorted(SPLICE_FORBIDDEN & set(obj))}"
            values = [obj.raw_get(key) for key in obj]
        elif isinstance(obj, ArrayObject):
            values = list(obj)
        else:
            return None
        return next((f for f in (foreign(v, seen) for v in values) if f), None)

    for n, (old, new) in enumerate(zip(ours.pages[first:end], theirs.pages, strict=True)):
        where = f"page {first + n + 1}"
        if [float(v) for v in old.mediabox] != [float(v) for v in new.mediabox]:
            return f"{where} has another size"
        old_links, new_links = links(old), links(new)
        if len(old_links) != len(new_links) or not all(map(same_link, old_links, new_links)):
            return f"{where} has other links"
        old_marks = MARKED.findall(old.get_contents().get_data())
        if old_marks != MARKED.findall(new.get_contents().get_data()):
            return f"{where} has other marked content"
        problem = foreign(new.raw_get("/Resources"), set())
        if problem:
            return f"{where}'s resources hold {problem}"
    return None


async def print_edition(browser, edition: str) -> dict:
    """Print one edition's single page to its PDF; return what was done
    (chapters, pages, prints, headings moved to a new page, seconds)."""
    spec = EDITIONS[edition]
    outside = []
    clock = [time.perf_counter()]
    seconds = {}

    def lap(name):
        clock.append(time.perf_counter())
        seconds[name] = seconds.get(name, 0) + clock[-1] - clock[-2]

    async def local_only(route):
        if route.request.url.startswith(base_url + "/") or route.request.url.startswith("data:"):
            await route.continue_()
        else:  # nothing of the book comes from the network
            outside.append(route.request.url)
            await route.abort()

    with serve(singlehtml_dir(edition)) as base_url:
        context = await browser.new_context(
            viewport=VIEWPORT, color_scheme="light", locale=spec["lang"]
        )
        await context.route("**/*", local_only)
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
        lap("load")
        title, author = cover_words(edition)
        await page.add_style_tag(path=str(PRINT_CSS))
        await page.emulate_media(media="print")
        entries = await page.evaluate(
            PREPARE_JS, [title, author, spec["edition"], spec["contents"]]
        )
        wide = await page.evaluate(OVERFLOW_JS)
        if wide:
            raise RuntimeError(
                f"{edition}: {len(wide)} elements are wider than the printed "
                f"text and would be cut at the margin: {wide[:5]}"
            )
        lap("prepare")
        # Print the book with a placeholder in each of the contents' number
        # boxes (their width is fixed, so no page break depends on what they
        # hold), read where each heading landed, write those pages into the
        # contents, and print the contents pages alone again. `write_book`
        # puts their text into the book's print, once `splice_check` has
        # compared what the book's links and structure tags rely on (else
        # the whole book is printed again, with its numbers).
        markers = [e["marker"] for e in entries] + ["pdf-contents"]
        afters = {e["marker"]: e["after"] for e in entries if e["after"]}
        await page.evaluate(FILL_JS, dict.fromkeys(markers, "0"))
        broken = set()
        prints = 0
        for _ in range(PASSES):
            prints += 1
            data = await page.pdf(**PDF_OPTIONS)
            lap("print")
            places, total = await asyncio.to_thread(
                destinations, data, markers + list(afters.values())
            )
            lap("read")
            # A heading whose next text went to a later page starts a page
            # (once: if it still stands alone, nothing more can be done).
            alone = [
                m for m, a in afters.items() if places[a][0] > places[m][0] and m not in broken
            ]
            if not alone:
                break
            await page.evaluate(BREAK_JS, alone)
            broken.update(alone)
            lap("prepare")
        else:
            raise RuntimeError(f"{edition}: headings still moved after {PASSES} prints")
        pages = {m: str(places[m][0] + 1) for m in markers}
        await page.evaluate(FILL_JS, pages)
        first, end = places["pdf-contents"][0], places[entries[0]["marker"]][0]
        if not first < end:
            raise RuntimeError(f"{edition}: the contents are not before the first chapter")
        # (With the book after them hidden: Chromium lays out and paints the
        # whole page for any range, 3 to 4 s here, under 1 s without it. The
        # footer then says the book's page count itself.)
        await page.evaluate(CONTENTS_ONLY_JS, True)
        footer = FOOTER.replace('<span class="totalPages"></span>', str(total))
        numbered = await page.pdf(
            **{**PDF_OPTIONS, "footer_template": footer}, page_ranges=f"{first + 1}-{end}"
        )
        await page.evaluate(CONTENTS_ONLY_JS, False)
        lap("print contents")
        problem = await asyncio.to_thread(splice_check, data, numbered, first, end)
        lap("read")
        if problem:
            print(f"{edition}: {problem}; printing the whole book again, with its numbers")
            prints += 1
            data, numbered = await page.pdf(**PDF_OPTIONS), None
            lap("print")
            again, _ = await asyncio.to_thread(destinations, data, markers)
            moved = [m for m in markers if again[m][0] != places[m][0]]
            if moved:
                raise RuntimeError(f"{edition}: {len(moved)} headings moved when numbered")
            lap("read")
        await context.close()
    lap("close")
    if errors:
        raise RuntimeError(f"{edition}: errors in the page: {errors}")
    if outside:
        raise RuntimeError(f"{edition}: the page asked the network for {outside}")
    info = {"/Title": f"{title} ({spec['edition']})", "/Author": author}
    pages = await asyncio.to_thread(
        write_book,
        data,
        pdf_path(edition),
        entries,
        places,
        spec["contents"],
        info,
        None if numbered is None else (numbered, first),
    )
    lap("bookmarks")
    return {
        "chapters": [e["title"] for e in entries if e["chapter"]],
        "pages": pages,
        "prints": prints,
        "contents": (first + 1, end) if numbered is not None else None,
        "moved": len(broken),
        "seconds": seconds,
    }


async def print_all(exe: str) -> dict[str, dict]:
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


# `make book` removes the PDFs whenever the site changes (pipeline.py); the
# PDFs also depend on this printer and its style sheet. Their digest, with the
# site's (pipeline.py's stamp of the last successful build), is kept beside
# the PDFs: when both PDFs exist and it matches, there is nothing to do.
BOOK_OK = ROOT / "_build" / ".book-succeeded"
PDF_OK = ROOT / "_build" / ".pdf-succeeded"


def inputs_digest(exe: str) -> str | None:
    if not BOOK_OK.exists():
        return None
    digest = hashlib.sha256(BOOK_OK.read_bytes())
    for path in (Path(__file__), PRINT_CSS):
        digest.update(path.read_bytes())
    browser = Path(exe).resolve()
    digest.update(f"{browser} {browser.stat().st_mtime_ns}".encode())
    return digest.hexdigest()


def up_to_date(digest: str | None) -> bool:
    site = build_site().EDITIONS["en"]["out"]
    return (
        digest is not None
        and PDF_OK.exists()
        and PDF_OK.read_text() == digest
        and all(pdf_path(e).exists() and (site / pdf_path(e).name).exists() for e in EDITIONS)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--print-only",
        action="store_true",
        help="print the single pages built last time (for work on the print CSS)",
    )
    parser.add_argument("--force", action="store_true", help="build even if nothing changed")
    args = parser.parse_args()
    start = time.perf_counter()
    site = build_site()
    if not (site.EDITIONS["en"]["out"] / "index.html").exists():
        raise SystemExit("make pdf: build the site first (make book)")
    exe = chromium()
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
        steps = ", ".join(f"{name} {t:.1f} s" for name, t in done["seconds"].items())
        print(
            f"{pdf_path(edition).relative_to(ROOT)}: {len(done['chapters'])} chapters, "
            f"{done['pages']} pages, {pdf_path(edition).stat().st_size / 1e6:.1f} MB; "
            f"{done['prints']} print(s) of the book"
            + (
                " and one of pages {}-{} with their numbers".format(*done["contents"])
                if done["contents"]
                else ""
            )
            + f", {done['moved']} headings moved to a new page; {steps}"
        )
    printed = time.perf_counter()
    if args.print_only:
        return 0
    # The English site serves both PDFs at its top; the index pages link them.
    for edition in EDITIONS:
        shutil.copyfile(pdf_path(edition), site.EDITIONS["en"]["out"] / pdf_path(edition).name)
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

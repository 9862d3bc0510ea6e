// The book's print: bookbuild/pdf.py adds this script to the single page of
// an edition (Sphinx's singlehtml), with book-print.css, and calls
// `bookPrint.prepare` once, then prints the page more than once.
//
// - A cover in front of the book, then a contents page made here (the
//   theme's print-only contents is hidden): the part captions of _toc.yml,
//   each chapter and its sections, each line a link to its heading, with a
//   box of fixed width for the page number, which `fillPages` fills.
// - Every heading gets an empty marker, `pdf-h-<n>`, as its first child, and
//   a (hidden) link to it: Chromium writes a named destination for every
//   element that a link of the page points to, so the printed PDF says on
//   which page and where each heading landed. The ids that the book's links
//   point to (a section's, a label's, a chapter's `document-...`) move onto
//   the section's heading, so that such a link lands on the heading.
// - A heading and what follows it go into one box that does not break, if
//   that is short; else the heading's box leaves room for a few lines after
//   it (book-print.css says why not `break-after: avoid`). A second marker,
//   `pdf-a-<n>`, before the first text after the heading tells whether that
//   text made it onto the heading's page; `breakBefore` starts a page with
//   the headings that did not. Measured in the print style at the A4 text
//   width (the page's viewport).
// - A table wider than the text gets a smaller type until it fits.
// - Dropdowns (the exercises' solutions) are open, as the theme prints them.
//   The theme opens them on "beforeprint" and closes them on "afterprint";
//   the page is printed more than once, so they are opened here, once, and
//   those handlers are kept out: every print is of the same page.
// - The index page's title becomes a chapter title among the others (h2 on
//   the single page, as the other chapters' titles are).
// - Links written as "index.html#x" point into this same page: they become
//   "#x", so that they stay links inside the PDF.
'use strict';

window.bookPrint = (() => {
  const KEEP_WITH_NEXT_PX = 300; // about a third of the A4 text height
  const HEADING = ':scope > :is(h1, h2, h3, h4, h5, h6)';

  function element(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function linkTo(id) {
    const a = document.createElement('a');
    a.href = '#' + id;
    return a;
  }

  function openDropdowns() {
    for (const type of ['beforeprint', 'afterprint'])
      window.addEventListener(type, e => e.stopImmediatePropagation(), true);
    document.querySelectorAll('.admonition.toggle.toggle-hidden').forEach(
      e => e.querySelector('button.toggle-button').click());
    document.querySelectorAll('details').forEach(e => { e.open = true; });
  }

  // A table wider than the text (math and long code do not wrap) gets a
  // smaller type until it fits.
  function shrinkWideTables(main) {
    main.querySelectorAll('table').forEach(t => {
      const fits = () => t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1;
      for (let size = 80; size >= 60 && !fits(); size -= 5) t.style.fontSize = size + '%';
    });
  }

  function cover(title, author, edition, colophon) {
    const section = element('section', 'book-cover');
    const lines = [['title', title], ['edition', edition], ['author', author], ['colophon', colophon]];
    for (const [name, text] of lines)
      section.appendChild(element('p', 'book-cover__' + name, text));
    return section;
  }

  // The parts of _toc.yml, from the theme's contents: the id of a part's
  // first chapter -> the part's caption.
  function partCaptions(printBody) {
    const parts = new Map();
    printBody.querySelectorAll('#jb-print-toc p.caption').forEach(p => {
      const chapterList = p.nextElementSibling;
      const firstLink = chapterList && chapterList.querySelector('a[href*="#document-"]');
      if (firstLink) parts.set(firstLink.getAttribute('href').split('#')[1], p.textContent.trim());
    });
    return parts;
  }

  // The chapters' sections -> their document ids: the index page's section
  // (null; its h1 becomes an h2), and each other page's, after its marker.
  function markChapters(main) {
    const first = main.querySelector('h1');
    const h2 = document.createElement('h2');
    h2.innerHTML = first.innerHTML;
    first.replaceWith(h2);
    const chapters = new Map([[h2.closest('section'), null]]);
    main.querySelectorAll('span[id^="document-"] + section').forEach(
      s => chapters.set(s, s.previousElementSibling.id));
    chapters.forEach((doc, s) => s.classList.add('book-chapter'));
    h2.closest('section').classList.add('book-chapter--first');
    return chapters;
  }

  // A heading's words, math as the words MathJax gives screen readers (its
  // MathML's text).
  function plainTitle(heading) {
    const copy = heading.cloneNode(true);
    copy.querySelectorAll('.headerlink').forEach(e => e.remove());
    copy.querySelectorAll('mjx-container').forEach(m => {
      const mml = m.querySelector('mjx-assistive-mml');
      m.replaceWith(mml ? mml.textContent : m.textContent);
    });
    return copy.textContent.replace(/\s+/g, ' ').trim();
  }

  // The first text a reader sees in an element (not MathJax's hidden MathML).
  function firstText(root) {
    const visible = t => t.textContent.trim() && t.parentElement.getClientRects().length
      && !t.parentElement.closest('mjx-assistive-mml, .headerlink, script, style');
    return document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: t => visible(t) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP,
    }).nextNode();
  }

  // Every section's heading, in order, measured before anything moves (one
  // layout): its level within its chapter (0 for the chapter's title), its
  // chapter's document id (chapters only), and what follows it.
  function findHeadings(main, chapters) {
    const headings = [];
    main.querySelectorAll('section').forEach(section => {
      const heading = section.querySelector(HEADING);
      if (!heading) return;
      const chapter = section.closest('.book-chapter');
      let level = 0;
      for (let s = section; s !== chapter; s = s.parentElement.closest('section')) level++;
      const next = heading.nextElementSibling;
      const short = next !== null && next.getBoundingClientRect().height < KEEP_WITH_NEXT_PX;
      headings.push({
        heading, section, level, next, short,
        doc: chapters.has(section) ? chapters.get(section) : undefined,
        title: plainTitle(heading),
        text: next && !short ? firstText(next) : null,
      });
    });
    return headings;
  }

  // Everything a link may point at lands on the heading itself.
  function moveTargetsOntoHeading({heading, section}) {
    const targets = [];
    for (let e = section.previousElementSibling; e && e.tagName === 'SPAN' && e.id
         && !e.textContent && !e.children.length; e = e.previousElementSibling) targets.push(e);
    targets.forEach(e => heading.prepend(e));
    if (section.id && !heading.id) {
      heading.id = section.id;
      section.removeAttribute('id');
    }
  }

  // A heading stays with what follows it (see book-print.css): in one box
  // with it when that is short (a paragraph, a list, a small cell), else
  // with room for a few lines below it.
  function keepWithNext({heading, next, short}) {
    const keep = element('div', 'book-keep');
    heading.before(keep);
    keep.append(heading);
    if (short) keep.append(next);
    else keep.classList.add('book-keep--room');
  }

  function addMarker(id, before, destinations) {
    const marker = element('span', 'book-marker');
    marker.id = id;
    before.before(marker);
    destinations.appendChild(linkTo(id));
    return id;
  }

  function markHeading(h, n, destinations) {
    moveTargetsOntoHeading(h);
    const marker = element('span', 'book-marker');
    marker.id = 'pdf-h-' + n;
    h.heading.prepend(marker);
    destinations.appendChild(linkTo(marker.id));
    keepWithNext(h);
    const after = h.text ? addMarker('pdf-a-' + n, h.text, destinations) : null;
    return {marker: marker.id, after, title: h.title, level: h.level, chapter: h.doc !== undefined};
  }

  // One line of the contents: the heading's words (its math and code as
  // printed), dotted leaders, and the box for its page number.
  function contentsLine(heading, level, marker) {
    const item = element('li', 'book-contents__level-' + level);
    const a = linkTo(marker);
    const text = element('span', 'book-contents__text');
    const copy = heading.cloneNode(true);
    copy.querySelectorAll('.headerlink, .book-marker').forEach(e => e.remove());
    copy.querySelectorAll('[id]').forEach(e => e.removeAttribute('id'));
    text.append(...copy.childNodes);
    const page = element('span', 'book-contents__page');
    page.dataset.marker = marker;
    a.append(text, element('span', 'book-contents__leader'), page);
    item.appendChild(a);
    return item;
  }

  // The contents: the chapters and their sections (the bookmarks have the
  // subsections too), under their parts' captions.
  function contents(word, headings, entries, parts) {
    const nav = element('nav', 'book-contents');
    nav.id = 'pdf-contents';
    const list = element('ol');
    nav.append(element('p', 'book-contents__title', word), list);
    headings.forEach(({heading, level, doc}, n) => {
      if (level > 1) return;
      if (doc && parts.has(doc))
        list.appendChild(element('li', 'book-contents__part', parts.get(doc)));
      list.appendChild(contentsLine(heading, level, entries[n].marker));
    });
    return nav;
  }

  // Returns the headings in order: {marker, after, title, level, chapter}.
  function prepare([title, author, edition, contentsWord, colophon]) {
    openDropdowns();
    const main = document.querySelector('article.bd-article');
    shrinkWideTables(main);
    const printBody = document.querySelector('#jb-print-docs-body');
    const parts = partCaptions(printBody);
    const headings = findHeadings(main, markChapters(main));
    const destinations = element('div', 'book-destinations');
    const entries = headings.map((h, n) => markHeading(h, n, destinations));
    const nav = contents(contentsWord, headings, entries, parts);
    destinations.appendChild(linkTo(nav.id));
    printBody.before(cover(title, author, edition, colophon), nav);
    document.body.appendChild(destinations);
    document.querySelectorAll('a[href^="index.html#"]').forEach(
      a => a.setAttribute('href', a.getAttribute('href').slice('index.html'.length)));
    return entries;
  }

  // What would be cut at the right margin: code, outputs, tables, displayed
  // math, figures wider than the text (measured at the A4 text width).
  function overflowing() {
    const main = document.querySelector('article.bd-article');
    const right = main.getBoundingClientRect().right;
    const cut = e => e.getBoundingClientRect().right > right + 1
      || (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible');
    return Array.from(main.querySelectorAll(
      'pre, table, mjx-container[display="true"], img, svg, figure, .cell_output, .output'))
      .filter(cut)
      .map(e => e.tagName.toLowerCase() + ': ' + e.textContent.trim().slice(0, 60));
  }

  // A page break before these headings (their keep boxes).
  function breakBefore(markers) {
    markers.forEach(m => document.getElementById(m).closest('.book-keep')
      .classList.add('book-keep--break'));
  }

  // The contents' page numbers (marker -> the page its heading is on), and
  // whether the next print is a draft (book-print.css): the page's layout,
  // with nothing painted but the markers.
  function fillPages(pages, draft) {
    document.querySelectorAll('.book-contents__page').forEach(e => {
      e.textContent = pages[e.dataset.marker];
    });
    document.documentElement.classList.toggle('book-draft', draft);
  }

  return {prepare, overflowing, breakBefore, fillPages};
})();

"""The header of every page, measured in Chromium at a desktop's and two
phones' widths, in both editions, light and dark.

- One search entry point is visible: the sidebar's search field on a
  desktop, the article header's search button on a phone (the theme pair
  once added a top bar holding a second search field at every width).
- The theme's top header (``#pst-header``) shows nothing when all it holds
  is search (and the sidebar toggles that come with the bar): no empty strip.
- Every button and link of the headers lies inside the viewport, and the page
  does not scroll sideways (the Chinese pages' "English" link once pushed
  the last button out, to 414 px in a 390-px view).

Dark mode changes the header's colours and its colour-mode icon, not the
layout of the page, so it is measured on each edition's home page; light
mode on every page.

The measuring runs in tests/test_site.py's ``test_page_in_chromium``, on the
page it has already loaded (one load per page serves the site, header and
accessibility checks: a load with its math typeset is most of a browser
check's time). The judging of one measurement is tested here, without a
browser, so that each rule is seen to fail.

Skipped outside CI when Chromium or the built site is missing.
"""

from __future__ import annotations

# The page is loaded at 1280 px; 390 px comes last because the first axe view
# (tests/test_a11y.py) is at that width too, which saves it a resize and a
# layout of the typeset math.
WIDTHS = (1280, 360, 390)
MODES = ("light", "dark")

# Two animation frames: the layout after a resize has been done.
AFTER_LAYOUT_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
MEASURE_JS = """() => {
  const shown = e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0
      && e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  };
  const SEARCH = '.search-button-field, .search-button, input[type="search"]';
  const search = Array.from(document.querySelectorAll(SEARCH)).filter(shown);
  const header = document.querySelector('#pst-header');
  let topShown = [], topOwn = [];
  if (header) {
    topShown = Array.from(header.querySelectorAll('*')).filter(shown);
    // What the top header holds besides search and the sidebar toggles.
    topOwn = Array.from(header.querySelectorAll('a, button, input, img, p, span'))
      .filter(e => !e.closest(SEARCH + ', .sidebar-toggle'))
      .filter(e => e.textContent.trim() || e.tagName === 'IMG' || e.tagName === 'INPUT');
  }
  const boxes = Array.from(document.querySelectorAll(
      '#pst-header a, #pst-header button, .bd-header-article a, .bd-header-article button'))
    .filter(shown)
    .map(e => {
      const r = e.getBoundingClientRect();
      return {name: (e.getAttribute('aria-label') || e.getAttribute('title')
                     || e.textContent).trim().replace(/\\s+/g, ' ').slice(0, 40),
              left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    });
  return {search: search.map(e => e.className), topShown: topShown.length,
          topHeight: header ? header.getBoundingClientRect().height : 0,
          topOwn: topOwn.length, boxes,
          scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth};
}"""


def judge(m: dict, view: str) -> list[str]:
    """What is wrong with one measurement (MEASURE_JS's answer) of ``view``."""
    problems = []
    if len(m["search"]) != 1:
        problems.append(f"[{view}] {len(m['search'])} visible search fields: {m['search']}")
    if m["topOwn"] == 0 and (m["topShown"] or m["topHeight"] > 0):
        problems.append(
            f"[{view}] the top header holds only search, yet shows "
            f"{m['topShown']} elements in a {m['topHeight']:.0f}-px strip"
        )
    for box in m["boxes"]:
        if box["left"] < -0.5 or box["right"] > m["width"] + 0.5:
            problems.append(
                f"[{view}] header item {box['name']!r} spans "
                f"{box['left']:.0f}..{box['right']:.0f} px, outside "
                f"0..{m['width']}"
            )
    if m["scrollWidth"] > m["width"]:
        problems.append(
            f"[{view}] the page scrolls sideways: scrollWidth {m['scrollWidth']} > {m['width']}"
        )
    return problems


def header_problems(tab, modes=MODES) -> list[str]:
    """Measure the header of the page loaded in ``tab`` (its math typeset) in
    each of ``modes`` at each width; the problems found, or []."""
    # The layout is measured when it has settled, not while the sidebars
    # slide after a resize.
    tab.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    problems = []
    for mode in modes:
        tab.emulate_media(color_scheme=mode)
        tab.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{mode}')")
        for width in WIDTHS:
            tab.set_viewport_size({"width": width, "height": 900})
            tab.evaluate(AFTER_LAYOUT_JS)
            problems += judge(tab.evaluate(MEASURE_JS), f"{width} px, {mode}")
    return problems


def test_each_header_rule_can_fail():
    good = {
        "search": ["search-button-field"],
        "topShown": 0,
        "topHeight": 0,
        "topOwn": 0,
        "boxes": [{"name": "English", "left": 300, "right": 380, "top": 0, "bottom": 40}],
        "scrollWidth": 390,
        "width": 390,
    }
    assert judge(good, "390 px, light") == []
    bad = {
        "search": ["search-button-field", "search-button"],
        "topShown": 3,
        "topHeight": 48,
        "topOwn": 0,
        "boxes": [{"name": "English", "left": 334, "right": 414, "top": 0, "bottom": 40}],
        "scrollWidth": 414,
        "width": 390,
    }
    found = judge(bad, "390 px, light")
    assert len(found) == 4, found
    for words in ("2 visible search fields", "holds only search", "'English' spans", "sideways"):
        assert any(words in p for p in found), (words, found)

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

Skipped outside CI when Chromium or the built site is missing.
"""

from __future__ import annotations

import pytest

from conftest import page_url, site_pages

WIDTHS = (1280, 390, 360)
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


@pytest.mark.site
@pytest.mark.parametrize("page", site_pages(), ids=str)
def test_header_fits_and_has_one_search(page, server, browser):
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    tab = context.new_page()
    tab.goto(page_url(server, page), wait_until="networkidle")
    if tab.evaluate("() => document.querySelectorAll('.math').length > 0"):
        tab.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000
        )
        tab.evaluate("() => MathJax.startup.promise")  # typeset math has its final width
    # The layout is measured when it has settled, not while the sidebars
    # slide after a resize.
    tab.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    problems = []
    for mode in MODES:
        tab.emulate_media(color_scheme=mode)
        tab.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{mode}')")
        for width in WIDTHS:
            tab.set_viewport_size({"width": width, "height": 900})
            tab.evaluate(AFTER_LAYOUT_JS)
            m = tab.evaluate(MEASURE_JS)
            view = f"{width} px, {mode}"
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
                    f"[{view}] the page scrolls sideways: scrollWidth "
                    f"{m['scrollWidth']} > {m['width']}"
                )
    context.close()
    assert not problems, f"{page}:\n" + "\n".join(problems)

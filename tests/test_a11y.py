"""Accessibility of the built site: axe-core on every page, in Chromium.

axe-core (pinned in package.json, installed by `npm ci`) is injected from
node_modules into each page of the built site: every rule in light mode at
1280 pixels; the rules that change with the view in dark mode (colours)
and at a phone's 390 pixels (code blocks that scroll sideways must be
reachable by keyboard). A translated page has its English page's elements
and styles, so its colours are checked on the English page, in both modes;
its own text, language, labels and narrow layout are checked on it.

The colour rules (contrast, links told apart from the text around them)
judge a piece of text by what its colours are made of: its colour, size,
weight and shadow, the backgrounds and opacities it sits on, and for a link
the text around it. Every page of the theme repeats a few dozen such
combinations (``COLOUR_KINDS``), so in each mode the colour rules run on the
text whose combination no earlier page of this worker had: all of the first
page, a few elements of the next (tests/test_site.py's pages, on two
workers). Every combination on the site is checked at least once, in both
modes, on every run, and a combination new to a page is checked on it.

No violation of impact "serious" or "critical" is allowed; the others are
counted per page and rule, written to _build/a11y.json (conftest.py gathers
them from both workers) and counted in the test summary so that a reviewer
sees them.

The checks run in tests/test_site.py's ``test_page_in_chromium``, on the
page it has already loaded and checked (one load per page serves the site,
header and accessibility checks).

Skipped outside CI when Chromium, the built site or axe-core is missing;
required with CI=true.
"""

from __future__ import annotations

import functools

import pytest

from conftest import ROOT, require_or_skip, source_page
from test_header import WIDTHS

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REPORT = ROOT / "_build" / "a11y.json"
BLOCKING = {"serious", "critical"}
# The views, and the axe rules each one runs ({}: all of them; "only" these;
# all but those to "skip"). The narrow view comes first, right after a resize
# to its width: the theme gives code blocks that scroll sideways a tab stop
# on load and 300 ms after a resize, and axe waits for it (THEME_TAB_STOPS).
COLOURS = ["color-contrast", "link-in-text-block"]
# avoid-inline-spacing judges every element with a style attribute, and
# MathJax gives hundreds of its elements one (sizes and offsets): on a page
# full of math, judging those was about 40 % of axe's time. It runs on the
# rest of the page, and MATH_SPACING checks what it would have judged in the
# math: that no inline style there sets a text spacing at all.
SPACING = "avoid-inline-spacing"
VIEWS = {
    "narrow": ("light", 390, {"only": ["scrollable-region-focusable"]}),
    "light": ("light", 1280, {"skip": [*COLOURS, SPACING]}),
    "spacing outside math": ("light", 1280, {"only": [SPACING], "exclude": ["mjx-container"]}),
    "light colours": ("light", 1280, {"only": COLOURS}),
    "dark colours": ("dark", 1280, {"only": COLOURS}),
}
# A translated page: its colours are its English page's (checked there).
TRANSLATED_VIEWS = {
    "narrow": VIEWS["narrow"],
    "light": VIEWS["light"],
    "spacing outside math": VIEWS["spacing outside math"],
}
# The inline styles in typeset math that set a spacing of text (what
# avoid-inline-spacing looks for; it fails only on the !important ones).
MATH_SPACING = """() => Array.from(document.querySelectorAll('mjx-container [style]'))
  .map(e => e.getAttribute('style'))
  .filter(s => /(letter-spacing|word-spacing|line-height)/i.test(s))"""
# What the colour rules judge a piece of visible text by, as one string: its
# colour, size, weight and shadow; the opacities, background images and
# colours it sits on, up to the first opaque background; and for a link, the
# colour and decoration of the text around it. The elements with each kind:
# the text's element, or its link (the element link-in-text-block judges).
# Hidden text (a closed fold) is left out: axe does not judge it.
COLOUR_KINDS = """() => {
  const styles = new Map();
  const css = (e) => styles.get(e) || styles.set(e, getComputedStyle(e)).get(e);
  const opaque = (c) => /^rgb\\(/.test(c) || /^rgba\\(.*,\\s*1\\)$/.test(c);
  const kinds = {};
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!e || !n.textContent.trim() || !e.checkVisibility({checkVisibilityCSS: true})) continue;
    const s = css(e), link = e.closest('a');
    const parts = [link ? 'link' : 'text', s.color, s.fontSize, s.fontWeight, s.textShadow];
    for (let a = e; a; a = a.parentElement) {
      const t = css(a);
      if (t.opacity !== '1') parts.push('opacity ' + t.opacity);
      if (t.backgroundImage !== 'none') parts.push(t.backgroundImage);
      if (t.backgroundColor !== 'rgba(0, 0, 0, 0)') parts.push(t.backgroundColor);
      if (opaque(t.backgroundColor) && t.backgroundImage === 'none') break;
    }
    if (link && link.parentElement) {
      const around = css(link.parentElement);
      parts.push(around.color, css(link).textDecorationLine, around.display);
    }
    const kind = parts.join(' ; ');
    (kinds[kind] = kinds[kind] || []).push(link || e);
  }
  return kinds;
}"""
# Per colour scheme, the kinds whose text the colour rules have judged in
# this worker (each xdist worker is its own process).
CHECKED: dict[str, set[str]] = {"light": set(), "dark": set()}
# Axe with ``rules``; with ``checked`` (a list of kinds), on the text of the
# other kinds only. Returns the violations and the kinds it judged.
RUN_AXE = (
    """async ([rules, checked]) => {
  const options = {resultTypes: ['violations']};
  if (rules.only) options.runOnly = {type: 'rule', values: rules.only};
  if (rules.skip) options.rules = Object.fromEntries(rules.skip.map(r => [r, {enabled: false}]));
  let context = rules.exclude ? {exclude: rules.exclude.map(s => [s])} : document, kinds = [];
  if (checked !== null) {  // the colour rules, on the text of kinds not checked yet
    const found = ("""
    + COLOUR_KINDS
    + """)();
    kinds = Object.keys(found).filter(k => !checked.includes(k));
    const include = kinds.flatMap(k => found[k]).map(e => [e]);
    if (include.length === 0) return {violations: [], kinds};
    context = {include};
  }
  const r = await axe.run(context, options);
  return {kinds, violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ') + '  ' + n.failureSummary.split('\\n')[1])}))};
}"""
)
# pydata-sphinx-theme's own list of boxes that get a tab stop when they scroll
# (addTabStopsToScrollableElements): true when each one that scrolls has it.
THEME_TAB_STOPS = """() => Array.from(document.querySelectorAll(
    'pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, '
    + '.pst-scrollable-table-container')).every(e => e.tabIndex === 0
    || !(e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight))"""
# Per page and view, the violations below BLOCKING: {rule: {impact, count}}.
RESULTS: dict[str, dict] = {}


@functools.cache
def axe_source() -> str:
    if not AXE.exists():
        require_or_skip("axe-core is not installed in node_modules: run 'npm ci' (make book does)")
    return AXE.read_text()


def accessibility_problems(tab, page) -> list[str]:
    """Run axe in each view on the page loaded in ``tab`` (its math typeset);
    the serious and critical violations, or []. The others go to RESULTS."""
    views = VIEWS if page == source_page(page) else TRANSLATED_VIEWS
    source = axe_source()
    tab.emulate_media(color_scheme="light")  # the views differ by data-theme alone
    # Colours are checked in their final state, not halfway through the
    # theme's transition from light to dark.
    tab.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    tab.add_script_tag(content=source)
    blocking = [f"inline spacing in math: {style}" for style in tab.evaluate(MATH_SPACING)]
    for number, (view, (scheme, width, rules)) in enumerate(views.items()):
        tab.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{scheme}')")
        tab.set_viewport_size({"width": width, "height": 900})
        if number == 0:
            # Typeset math, or a narrower view, can make a table or an output
            # scroll; the theme gives such a box its tab stop 300 ms after the
            # page last changed or was resized. Axe runs once the theme has
            # done so (a box it never marks fails here).
            tab.wait_for_function(THEME_TAB_STOPS, timeout=10_000)
        colours_only = rules.get("only") == COLOURS
        checked = sorted(CHECKED[scheme]) if colours_only else None
        result = tab.evaluate(RUN_AXE, [rules, checked])
        violations = result["violations"]
        if colours_only:
            CHECKED[scheme].update(result["kinds"])
        RESULTS.setdefault(str(page), {})[view] = {
            v["id"]: {"impact": v["impact"], "count": len(v["nodes"])}
            for v in violations
            if v["impact"] not in BLOCKING
        }
        blocking += [
            f"[{view}] {v['impact']} {v['id']} ({v['help']}):\n    " + "\n    ".join(v["nodes"][:6])
            for v in violations
            if v["impact"] in BLOCKING
        ]
    return blocking


def test_views_start_narrow_and_check_colours_in_both_modes():
    """The narrow view is first (the tab-stop wait belongs to it), at the
    width the header's checks end with; the colour
    rules run in light and in dark mode on an English page, and every other
    rule in light mode on both editions' pages."""
    for views in (VIEWS, TRANSLATED_VIEWS):
        assert next(iter(views.values()))[1] < 1280
        # the header's last width: the first view needs no resize (test_header)
        assert next(iter(views.values()))[1] == WIDTHS[-1]
        assert {"skip": [*COLOURS, SPACING]} in [r for _, _, r in views.values()]
        assert ("light", 1280, {"only": [SPACING], "exclude": ["mjx-container"]}) in views.values()
    colours = {s for s, _, r in VIEWS.values() if r.get("only") == COLOURS}
    assert colours == {"light", "dark"}
    assert all(r.get("only") != COLOURS for _, _, r in TRANSLATED_VIEWS.values())


SPECIMEN = """<body style="background: white">
<p>plain <a href="#a" style="text-decoration: underline">link</a></p>
<p>more plain text <a href="#b" style="text-decoration: underline">another link</a></p>
<p style="color: #777">grey</p>
<div style="background: #ddd"><p>on grey</p></div>
<p style="font-weight: bold">bold</p>
<details><summary>fold</summary><p style="color: #abc">hidden</p></details>
</body>"""


@pytest.mark.site
def test_colour_kinds_group_text_by_what_its_colours_are_made_of(browser):
    """Text with the same colours, size and backgrounds is one kind; a change
    of any of them, or a link, is another; hidden text is none."""
    tab = browser.new_page()
    try:
        tab.set_content(SPECIMEN)
        found = tab.evaluate("() => Object.values((" + COLOUR_KINDS + ")()).map(es => es.length)")
    finally:
        tab.close()
    # plain text (two paragraphs and the fold's summary), links (2), grey,
    # on grey, bold; not the fold's hidden paragraph
    assert sorted(found) == [1, 1, 1, 2, 3], found


@pytest.mark.site
def test_inline_spacing_is_judged_outside_math_by_axe_and_inside_by_its_check(browser):
    """An !important spacing outside typeset math fails axe's view; inside it,
    axe's view leaves it out and MATH_SPACING reports it."""
    tab = browser.new_page()
    try:
        tab.set_content(
            '<main><p style="letter-spacing: 0.01em !important">outside</p>'
            '<mjx-container><span style="word-spacing: 0.01em !important">inside</span>'
            '<span style="width: 2em">x</span></mjx-container></main>'
        )
        tab.add_script_tag(content=axe_source())
        result = tab.evaluate(RUN_AXE, [VIEWS["spacing outside math"][2], None])
        found = [(v["id"], n.split()[0]) for v in result["violations"] for n in v["nodes"]]
        assert found == [(SPACING, "p")], found
        assert tab.evaluate(MATH_SPACING) == ["word-spacing: 0.01em !important"]
    finally:
        tab.close()

"""Accessibility of the built site: axe-core on every page, in Chromium.

axe-core (pinned in package.json, installed by `npm ci`) is injected from
node_modules into each page of the built site: every rule in light mode at
1280 pixels; the rules that change with the view in dark mode (colours)
and at a phone's 390 pixels (code blocks that scroll sideways must be
reachable by keyboard). A translated page has its English page's elements
and styles, so its colours are checked on the English page, in both modes;
its own text, language, labels and narrow layout are checked on it.
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

from conftest import ROOT, require_or_skip, source_page

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REPORT = ROOT / "_build" / "a11y.json"
BLOCKING = {"serious", "critical"}
# The views, and the axe rules each one runs ({}: all of them; "only" these;
# all but those to "skip"). The narrow view comes first, right after a resize
# to its width: the theme gives code blocks that scroll sideways a tab stop
# on load and 300 ms after a resize, and axe waits for it (THEME_TAB_STOPS).
COLOURS = ["color-contrast", "link-in-text-block"]
VIEWS = {
    "narrow": ("light", 390, {"only": ["scrollable-region-focusable"]}),
    "light": ("light", 1280, {}),
    "dark": ("dark", 1280, {"only": COLOURS}),
}
# A translated page: its colours are its English page's (checked there).
TRANSLATED_VIEWS = {
    "narrow": VIEWS["narrow"],
    "light": ("light", 1280, {"skip": COLOURS}),
}
RUN_AXE = """async (rules) => {
  const options = {resultTypes: ['violations']};
  if (rules.only) options.runOnly = {type: 'rule', values: rules.only};
  if (rules.skip) options.rules = Object.fromEntries(rules.skip.map(r => [r, {enabled: false}]));
  const r = await axe.run(document, options);
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ') + '  ' + n.failureSummary.split('\\n')[1])}));
}"""
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
    blocking = []
    for number, (view, (scheme, width, rules)) in enumerate(views.items()):
        tab.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{scheme}')")
        tab.set_viewport_size({"width": width, "height": 900})
        if number == 0:
            # Typeset math, or a narrower view, can make a table or an output
            # scroll; the theme gives such a box its tab stop 300 ms after the
            # page last changed or was resized. Axe runs once the theme has
            # done so (a box it never marks fails here).
            tab.wait_for_function(THEME_TAB_STOPS, timeout=10_000)
        violations = tab.evaluate(RUN_AXE, rules)
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
    """The narrow view is first (the tab-stop wait belongs to it), and the
    colour rules run in light and in dark mode."""
    for views in (VIEWS, TRANSLATED_VIEWS):
        assert next(iter(views.values()))[1] < 1280
    colours = {s for s, _, r in VIEWS.values() if set(COLOURS) <= set(r.get("only", COLOURS))}
    assert colours == {"light", "dark"}
    # A translated page runs every other rule in light mode.
    assert [r for _, _, r in TRANSLATED_VIEWS.values() if r.get("skip") == COLOURS]
    assert all("only" in r or r.get("skip") == COLOURS for _, _, r in TRANSLATED_VIEWS.values())

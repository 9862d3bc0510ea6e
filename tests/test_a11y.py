"""Accessibility of the built site: axe-core on every page, in Chromium.

axe-core (pinned in package.json, installed by `npm ci`) is injected from
node_modules into each page of the built site: every rule in light mode at
1280 pixels; the rules that change with the view in dark mode (colours,
English pages) and at a phone's 390 pixels (code blocks that scroll sideways
must be reachable by keyboard; both editions).
No violation of impact "serious" or "critical" is allowed; the others are
counted per page and rule, written to _build/a11y.json and printed in the
test summary so that a reviewer sees them.

Skipped outside CI when Chromium, the built site or axe-core is missing;
required with CI=true.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, page_url, require_or_skip, site_pages, source_page

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
REPORT = ROOT / "_build" / "a11y.json"
BLOCKING = {"serious", "critical"}
# The views, and the axe rules each one runs (None: all of them). The page
# is loaded at the first view's width: the theme gives code blocks that
# scroll sideways a tab stop on load, and only 300 ms after a resize.
VIEWS = {
    "narrow": ("light", 390, ["scrollable-region-focusable", "color-contrast"]),
    "light": ("light", 1280, None),
    "dark": ("dark", 1280, ["color-contrast", "link-in-text-block"]),
}
RUN_AXE = """async (rules) => {
  const options = {resultTypes: ['violations']};
  if (rules) options.runOnly = {type: 'rule', values: rules};
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
_results: dict[str, dict] = {}


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        require_or_skip("axe-core is not installed in node_modules: run 'npm ci' (make book does)")
    return AXE.read_text()


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if _results:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(json.dumps(_results, indent=2, sort_keys=True) + "\n")


@pytest.mark.site
@pytest.mark.parametrize("page", site_pages(), ids=str)
def test_page_has_no_serious_accessibility_violation(page, server, browser, axe_source):
    # A translated page shares the English page's styles, so the dark view
    # would repeat the English results; its own text, language and labels
    # are checked by the full light view, and its own line lengths (Chinese
    # words, the "English" link) by the narrow one.
    views = (
        VIEWS if page == source_page(page) else {"narrow": VIEWS["narrow"], "light": VIEWS["light"]}
    )
    first = next(iter(views.values()))
    context = browser.new_context(viewport={"width": first[1], "height": 900})
    tab = context.new_page()
    tab.goto(page_url(server, page), wait_until="networkidle")
    if tab.evaluate("() => document.querySelectorAll('.math').length > 0"):
        tab.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000
        )
        tab.evaluate("() => MathJax.startup.promise")
    # Typeset math can widen a table or an output until it scrolls; the theme
    # gives such a box its tab stop 300 ms after the page last changed. Axe
    # runs once the theme has done so (a box it never marks fails here).
    tab.wait_for_function(THEME_TAB_STOPS, timeout=10_000)
    tab.add_script_tag(content=axe_source)
    # Colours are checked in their final state, not halfway through the
    # theme's transition from light to dark.
    tab.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    blocking = []
    for view, (scheme, width, rules) in views.items():
        tab.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{scheme}')")
        tab.set_viewport_size({"width": width, "height": 900})
        violations = tab.evaluate(RUN_AXE, rules)
        _results.setdefault(str(page), {})[view] = {
            v["id"]: {"impact": v["impact"], "count": len(v["nodes"])}
            for v in violations
            if v["impact"] not in BLOCKING
        }
        blocking += [(view, v) for v in violations if v["impact"] in BLOCKING]
    context.close()
    assert not blocking, f"{page}: " + "\n".join(
        f"[{view}] {v['impact']} {v['id']} ({v['help']}):\n    " + "\n    ".join(v["nodes"][:6])
        for view, v in blocking
    )

"""The built site, opened page by page in headless Chromium.

For every page in _toc.yml, in both editions (English, and Chinese under
zh_CN/): no console error, no request leaving this machine, math typeset by
the MathJax the book serves, images loaded and described, no log text or
warnings in outputs, no horizontal scroll at 1280 pixels, and a Binder
button that opens this page's source. With MATGRAD_SCREENSHOTS=1, full-page
screenshots (light, and dark for the English pages) go to _build/screenshots/
for review: they check nothing, and drawing two full pages was a quarter of
the browser's time per page, so a plain test run makes none.

The same load of the page then serves the header's checks
(tests/test_header.py: three widths; light, and dark on the home pages) and axe-core's
(tests/test_a11y.py): loading a page and typesetting its math is most of
the time of a browser check, and each page used to be loaded once for each
of the three. Console errors and requests to other hosts are watched until
the last of them. Each part reports its own problems; all are listed.

Outside CI the module is skipped, with the reason, when Chromium or the
built site is missing; with CI=true both are required.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from conftest import LOG_NOISE, ROOT, lab_urlpath, page_url, site_pages, source_page
from test_a11y import accessibility_problems
from test_header import MODES, header_problems

SHOTS = ROOT / "_build" / "screenshots"
SCREENSHOTS = os.environ.get("MATGRAD_SCREENSHOTS") == "1"
LOCAL = {"127.0.0.1", "localhost"}
RAW_TABLE = re.compile(r"\|\s*:?-{3,}:?\s*\|")

# Text of the article outside code, outputs and typeset math: raw TeX would show here.
PROSE_JS = """() => {
  const root = document.querySelector('article') || document.body;
  const copy = root.cloneNode(true);
  copy.querySelectorAll('pre, code, mjx-container, script, style').forEach(e => e.remove());
  return copy.innerText;
}"""
OUTPUTS_JS = """() => Array.from(document.querySelectorAll('.cell_output'))
  .filter(e => !e.closest('.tag_raises-exception')).map(e => e.innerText).join('\\n')"""
IMAGES_JS = """() => Array.from(document.querySelectorAll('article img')).map(img => ({
  src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
  described: (img.getAttribute('alt') || '').trim().length > 0
             || !!(img.closest('figure') && img.closest('figure').querySelector('figcaption'))
}))"""


def _binder_url(page: Path) -> str:
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = urlparse(cfg["repository"]["url"]).path.strip("/")
    hub = cfg["launch_buttons"]["binderhub_url"].rstrip("/")
    branch = cfg["repository"].get("branch", "main")
    return f"{hub}/v2/gh/{repo}/{branch}?urlpath={lab_urlpath(page)}"


@pytest.fixture(scope="module")
def context(browser):
    """One browser context for a worker's pages: the scripts that every page
    loads (MathJax, the theme's) come from its cache, compiled once, as in a
    reader's browser. Each check sets the colour mode and width it needs."""
    shared = browser.new_context(viewport={"width": 1280, "height": 900})
    yield shared
    shared.close()


@pytest.fixture
def tab(context):
    """A new tab of the shared context, closed after the test."""
    page = context.new_page()
    yield page
    page.close()


@pytest.mark.site
@pytest.mark.parametrize("page", site_pages(), ids=str)
def test_page_in_chromium(page, server, tab):
    url = page_url(server, page)
    errors, requests = [], []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("request", lambda r: requests.append(r.url))
    # "load": the page and everything it names have arrived (the math is
    # awaited below); waiting for half a second of network silence on top
    # of that cost every page that half second. Requests made later are
    # still caught: the listener stays until the last check.
    response = tab.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url} answered {response and response.status}"

    has_math = tab.evaluate("() => document.querySelectorAll('.math').length > 0")
    if has_math:
        tab.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000
        )
        tab.evaluate("() => MathJax.startup.promise")  # typeset math has its final width
    problems = site_problems(tab, page, has_math)
    problems += header_problems(tab, MODES if source_page(page) == Path("index.md") else ["light"])
    problems += accessibility_problems(tab, page)

    if errors:
        problems.append(f"console errors {errors}")
    outside = sorted(
        {
            u
            for u in requests
            if urlparse(u).scheme in ("http", "https", "ws", "wss")
            and urlparse(u).hostname not in LOCAL
        }
    )
    if outside:
        problems.append(f"requests to other hosts {outside}")
    assert not problems, f"{page}:\n" + "\n".join(problems)


def site_problems(tab, page, has_math) -> list[str]:
    """The page's text, outputs, images, width and Binder link at 1280 px,
    and its screenshots (MATGRAD_SCREENSHOTS=1)."""
    problems = []
    if has_math and tab.evaluate("() => document.querySelectorAll('mjx-container').length") == 0:
        problems.append("the page has math, and MathJax typeset none of it")
    prose = tab.evaluate(PROSE_JS)
    for raw in ("\\(", "\\[", "$$", "\\begin{"):
        if raw in prose:
            problems.append(f"raw TeX {raw!r} left in the page text")
    if RAW_TABLE.search(prose):  # a table whose cells a stray "|" broke
        problems.append("a raw Markdown table left in the page text")

    outputs = tab.evaluate(OUTPUTS_JS)
    for word in LOG_NOISE:
        if word in outputs:
            problems.append(f"output text contains {word!r}")

    for img in tab.evaluate(IMAGES_JS):
        if not img["loaded"]:
            problems.append(f"image {img['src']} did not load")
        if not img["described"]:
            problems.append(f"image {img['src']} has neither alt text nor a caption")

    width = tab.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if width[0] > width[1]:
        problems.append(f"horizontal scroll at 1280 px ({width[0]} > {width[1]})")

    binder = tab.evaluate("""() => Array.from(document.querySelectorAll('a'))
        .map(a => a.href).filter(h => h.includes('/v2/gh/'))""")
    if _binder_url(source_page(page)) not in binder:
        problems.append(f"Binder links {binder}, not {_binder_url(source_page(page))}")

    if not SCREENSHOTS:
        return problems
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = page.with_suffix("").as_posix().replace("/", "__")
    tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    if page == source_page(page):  # a translation has the same colours as the English page
        tab.emulate_media(color_scheme="dark")
        tab.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
        tab.screenshot(path=str(SHOTS / f"{name}-dark.png"), full_page=True)
    return problems

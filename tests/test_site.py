"""The built site, opened page by page in headless Chromium.

For every page in _toc.yml, in both editions (English, and Chinese under
zh_CN/): no console error, no request leaving this machine, math typeset by
the MathJax the book serves, images loaded and described, no log text or
warnings in outputs, no horizontal scroll at 1280 pixels, and a Binder
button that opens this page's source. Full-page screenshots (light, and dark
for the English pages) go to _build/screenshots/ for review.

Outside CI the module is skipped, with the reason, when Chromium or the
built site is missing; with CI=true both are required.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from conftest import LOG_NOISE, ROOT, lab_urlpath, page_url, site_pages, source_page

SHOTS = ROOT / "_build" / "screenshots"
LOCAL = {"127.0.0.1", "localhost"}

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


@pytest.mark.site
@pytest.mark.parametrize("page", site_pages(), ids=str)
def test_page_in_chromium(page, server, browser):
    url = page_url(server, page)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors, requests = [], []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("request", lambda r: requests.append(r.url))
    response = tab.goto(url, wait_until="networkidle")
    assert response is not None and response.ok, f"{url} answered {response and response.status}"

    has_math = tab.evaluate("() => document.querySelectorAll('.math').length > 0")
    if has_math:
        tab.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000
        )
        tab.evaluate("() => MathJax.startup.promise")
        assert tab.evaluate("() => document.querySelectorAll('mjx-container').length") > 0
    prose = tab.evaluate(PROSE_JS)
    for raw in ("\\(", "\\[", "$$", "\\begin{"):
        assert raw not in prose, f"{page}: raw TeX {raw!r} left in the page text"

    outputs = tab.evaluate(OUTPUTS_JS)
    for word in LOG_NOISE:
        assert word not in outputs, f"{page}: output text contains {word!r}"

    for img in tab.evaluate(IMAGES_JS):
        assert img["loaded"], f"{page}: image {img['src']} did not load"
        assert img["described"], f"{page}: image {img['src']} has neither alt text nor a caption"

    width = tab.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"{page}: horizontal scroll at 1280 px ({width[0]} > {width[1]})"

    binder = tab.evaluate("""() => Array.from(document.querySelectorAll('a'))
        .map(a => a.href).filter(h => h.includes('/v2/gh/'))""")
    assert _binder_url(source_page(page)) in binder, f"{page}: Binder links {binder}"

    SHOTS.mkdir(parents=True, exist_ok=True)
    name = page.with_suffix("").as_posix().replace("/", "__")
    tab.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    if page == source_page(page):  # a translation has the same colours as the English page
        tab.emulate_media(color_scheme="dark")
        tab.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
        tab.screenshot(path=str(SHOTS / f"{name}-dark.png"), full_page=True)

    assert not errors, f"{page}: console errors {errors}"
    outside = sorted(
        {
            u
            for u in requests
            if urlparse(u).scheme in ("http", "https", "ws", "wss")
            and urlparse(u).hostname not in LOCAL
        }
    )
    assert not outside, f"{page}: requests to other hosts {outside}"
    context.close()

"""Every local link and #anchor in the built site (both editions) resolves."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from conftest import site_pages


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("img", "script") and attrs.get("src"):
            self.links.append(attrs["src"])
        if tag == "link" and attrs.get("href") and "stylesheet" in (attrs.get("rel") or ""):
            self.links.append(attrs["href"])


def _parse(path: Path, cache: dict) -> _Page:
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        cache[path] = page
    return cache[path]


def test_every_local_link_resolves(built_site):
    cache: dict = {}
    checked, broken = 0, []
    pages = [built_site / p.with_suffix(".html") for p in site_pages()]
    for page in pages:
        for href in _parse(page, cache).links:
            url = urlparse(href)
            if url.scheme or href.startswith(("mailto:", "//")):
                continue  # links to other sites are not followed (no network)
            target = page if not url.path else (page.parent / unquote(url.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(built_site)}: {href} (no file)")
            elif url.fragment and target.suffix == ".html":
                if unquote(url.fragment) not in _parse(target, cache).ids:
                    broken.append(f"{page.relative_to(built_site)}: {href} (no anchor)")
    assert checked > 0
    assert not broken, "broken links:\n" + "\n".join(broken)
    print(f"{checked} local links and anchors resolved across {len(pages)} pages")

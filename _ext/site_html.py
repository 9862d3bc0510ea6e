"""The site's HTML, fixed so that a browser sees no errors and axe-core
(tests/test_a11y.py) finds nothing serious.

- Jupyter Book 1 loads sphinx-thebe even with thebe switched off, and its
  config script ends up on every page twice ("Identifier 'THEBE_JS_URL' has
  already been declared").  With thebe off, we drop its scripts and styles,
  which also removes the only reference to another host from the pages.
- Accessible names of the theme's header buttons (axe rule
  label-content-name-mismatch): the search button shows "Search Ctrl+K"
  but was named "Search", so its aria-label goes and its visible text names
  it; the colour-mode button's icons carried titles ("Light", "Dark", ...)
  that read as its text, so they become aria-hidden and the button keeps its
  name, "Color mode".
- The bibliography (sphinxcontrib-bibtex through docutils) is a
  ``role="list"`` whose entries have the deprecated ``doc-biblioentry``
  role, which a list may not contain (axe: aria-required-children,
  critical); the entries become ``listitem``.
- No top bar that holds only a second search field (pydata-sphinx-theme's
  ``navbar_persistent`` set empty; tests/test_header.py measures the
  header at 1280, 390 and 360 px in both editions).
- (Code blocks that scroll sideways need no fix here: pydata-sphinx-theme
  gives each one that overflows a tab stop, and re-checks 300 ms after a
  resize.)

The HTML fixes are applied to each page as the builder renders it.

(The theme's "Got invalid theme mode" console error is fixed in _config.yml,
by ``html_context: {default_mode: auto}``.)
"""

from __future__ import annotations

import re

# (pattern, replacement, how many matches a page must have at most): exact
# and narrow, so that a theme update that changes the markup is noticed by
# the accessibility test rather than silently half-fixed.
_SEARCH_FIELD = re.compile(
    r'(<button class="btn search-button-field search-button__button[^"]*" title="[^"]+") '
    r'aria-label="[^"]+"'
)
_THEME_ICON = re.compile(
    r'(<i class="theme-switch fa-solid [^"]*" data-mode="\w+")\s+title="[^"]*"'
)
_BIBLIOENTRY = re.compile(r'(<div class="citation" id="[^"]+") role="doc-biblioentry"')


def fix_html(html: str) -> str:
    html = _SEARCH_FIELD.sub(r"\1", html)
    html = _THEME_ICON.sub(r'\1 aria-hidden="true"', html)
    if 'class="citation-list"' in html:
        html = _BIBLIOENTRY.sub(r'\1 role="listitem"', html)
    return html


def _is_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", "") or "")
    return "thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree):
    if app.config.html_theme_options.get("launch_buttons", {}).get("thebe"):
        return
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_thebe(a)]


def _fix_rendered_pages(app):
    """Wrap the HTML builder's template rendering with ``fix_html``."""
    templates = getattr(app.builder, "templates", None)
    if app.builder.format != "html" or templates is None:
        return
    render = templates.render

    def render_fixed(template, context):
        return fix_html(render(template, context))

    templates.render = render_fixed


def _configure(app, config):
    # pydata-sphinx-theme >= 0.16 fills its top navbar with a search field
    # when navbar_persistent is not set (pydata_sphinx_theme/__init__.py).
    # sphinx-book-theme sets every other navbar slot empty, so the bar held
    # nothing but a second search field (the sidebar has one; below 992 px
    # the article header has a search button). An empty list drops the bar.
    config.html_theme_options.setdefault("navbar_persistent", [])


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("builder-inited", _fix_rendered_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

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
  name, "Color mode". Both are the book's copies of the theme's components
  (_ext/templates/search-button-field.html, theme-switcher.html).
- A folded code cell (MyST-NB's ``HideCodeCellNode``) has a visitor in the
  PDF's single-page build too (see ``setup``); its toggle shows
  "Show code cell source" (显示代码 in Chinese) but is named "Toggle hidden
  content" by an aria-label (axe: label-content-name-mismatch, serious; and
  English on a Chinese page): the aria-label goes, and its visible words
  name it.
- The bibliography (sphinxcontrib-bibtex through docutils) is a
  ``role="list"`` whose entries have the deprecated ``doc-biblioentry``
  role, which a list may not contain (axe: aria-required-children,
  critical); the entries become ``listitem``, in the page's body as each
  page is rendered.
- No top bar that holds only a second search field (pydata-sphinx-theme's
  ``navbar_persistent`` set empty; tests/test_header.py measures the
  header at 1280, 390 and 360 px in both editions).
- (Code blocks that scroll sideways need no fix here: pydata-sphinx-theme
  gives each one that overflows a tab stop, and re-checks 300 ms after a
  resize.)

(The theme's "Got invalid theme mode" console error is fixed in _config.yml,
by ``html_context: {default_mode: auto}``.)
"""

from __future__ import annotations

import re

# Exact and narrow, so that a change in docutils' markup is noticed by the
# accessibility test rather than silently half-fixed.
_BIBLIOENTRY = re.compile(r'(<div class="citation" id="[^"]+") role="doc-biblioentry"')


def bibliography_roles(body: str) -> str:
    """The page's body with its bibliography entries as list items."""
    if 'class="citation-list"' not in body:
        return body
    return _BIBLIOENTRY.sub(r'\1 role="listitem"', body)


# MyST-NB 1.4.0 writes exactly this (myst_nb/sphinx_.py, visit_HideCellInput).
_FOLDED_CELL_SUMMARY = '<summary aria-label="Toggle hidden content">'


def folded_cell_names(body: str) -> str:
    """The page's body with each folded cell's toggle named by its visible words."""
    return body.replace(_FOLDED_CELL_SUMMARY, "<summary>")


def _fix_body(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = folded_cell_names(bibliography_roles(context["body"]))


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


def _configure(app, config):
    # pydata-sphinx-theme >= 0.16 fills its top navbar with a search field
    # when navbar_persistent is not set (pydata_sphinx_theme/__init__.py).
    # sphinx-book-theme sets every other navbar slot empty, so the bar held
    # nothing but a second search field (the sidebar has one; below 992 px
    # the article header has a search button). An empty list drops the bar.
    config.html_theme_options.setdefault("navbar_persistent", [])


def setup(app):
    # The PDF's single-page build has no visitor for a folded code cell:
    # MyST-NB registers it for the "html" builder only, and Sphinx falls
    # back from "singlehtml" to "html" only for a builder that no extension
    # gave handlers of its own (sphinx-exercise gives "singlehtml" some).
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput, visit_HideCellInput

    app.add_node(
        HideCodeCellNode, override=True, singlehtml=(visit_HideCellInput, depart_HideCellInput)
    )
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("html-page-context", _fix_body)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

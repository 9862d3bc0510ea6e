"""Vega-Lite outputs (the Jacobian explorer) as interactive charts, offline.

A code cell that calls ``matgrad.explorer.show_explorer`` outputs Vega-Lite
(``application/vnd.vegalite.v5+json``, which JupyterLab draws by itself) and
a static PNG of the same chart. myst-nb knows neither Vega-Lite nor how to
keep two formats of one output. So:

- ``VegaLiteRenderer``, a MyST-NB mime renderer plugin (registered under the
  ``myst_nb.mime_renderers`` entry point in pyproject.toml), renders the
  Vega-Lite format as the chart's specification in a
  ``<script type="application/json">`` element, beside an empty element the
  chart is drawn into;

and in the HTML builders this extension:

- keeps the PNG in the same output as the fallback (before myst-nb picks one
  format per builder), with the figure's alt text: the reader without
  scripts, and the printed page (the PDF), see it; a small script
  (_ext/vega_static/matgrad-vega.js) draws the chart with vega-embed and
  then hides the PNG on screen;
- adds Vega, Vega-Lite and vega-embed, which the site serves itself from
  <site>/vega/ (copied from node_modules by ``python -m bookbuild vega``,
  published by ``html_extra_path``), and the script and its style sheet, to
  the pages that have such an output only.

The Chinese edition's twin (matgrad.plotting.show's metadata) replaces both
formats before MyST-NB asks its plugins (the book's twin swap wraps
``render_mime_type``, which tries the plugins first).
Other builders keep myst-nb's choice (the PNG).
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

VEGALITE = "application/vnd.vegalite.v5+json"
# The script and style sheet of this extension. Not in the book's _static/,
# whose .js and .css files Jupyter Book adds to every page.
STATIC = Path(__file__).with_name("vega_static")
SCRIPTS = ("../vega/vega.min.js", "../vega/vega-lite.min.js", "../vega/vega-embed.min.js")


def _spec_html(spec) -> str:
    text = json.dumps(spec, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/")  # nothing in the JSON can close the script element
    return (
        '<div class="matgrad-vega-view"></div>'
        f'<script type="application/json" class="matgrad-vega-spec">{text}</script>'
    )


class VegaLiteRenderer:
    """MyST-NB's mime renderer plugin for Vega-Lite (entry point
    ``myst_nb.mime_renderers`` in pyproject.toml): the specification as JSON,
    beside the element the chart is drawn into."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline):
        if inline or data.mime_type != VEGALITE:
            return None
        return [nodes.raw("", _spec_html(data.content), format="html")]


class KeepFallback(SphinxPostTransform):
    """Before myst-nb selects one format per output (priority 4): in HTML,
    an output with Vega-Lite becomes the chart and its PNG fallback."""

    default_priority = 3
    formats = ("html",)

    def run(self, **kwargs):
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            kinds = {child.get("mime_type"): child for child in bundle.children}
            if VEGALITE not in kinds or "image/png" not in kinds:
                continue
            fallback = nodes.container(classes=["matgrad-vega-fallback"])
            fallback.extend(kinds["image/png"].children)
            chart = nodes.container(classes=["matgrad-vega"])
            chart += fallback
            chart.extend(kinds[VEGALITE].children)
            bundle.replace_self(chart)


def _add_assets(app, pagename, templatename, context, doctree):
    if doctree is None or app.builder.format != "html":
        return
    if not any("matgrad-vega" in n.get("classes", ()) for n in doctree.findall(nodes.container)):
        return
    # The builder's own lists, which Sphinx resets before each page: this page
    # only (app.add_js_file would also register them for every later page).
    for script in (*SCRIPTS, "matgrad-vega.js"):
        app.builder.add_js_file(script, priority=500)
    app.builder.add_css_file("matgrad-vega.css", priority=500)


def _static_path(app, config):
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def setup(app):
    app.add_post_transform(KeepFallback)
    app.connect("config-inited", _static_path)
    app.connect("html-page-context", _add_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

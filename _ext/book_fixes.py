"""Small Sphinx fixes for this book's site, so that a browser sees no errors.

- Jupyter Book 1 loads sphinx-thebe even with thebe switched off, and its
  config script ends up on every page twice ("Identifier 'THEBE_JS_URL' has
  already been declared").  With thebe off, we drop its scripts and styles,
  which also removes the only reference to another host from the pages.

(The theme's "Got invalid theme mode" console error is fixed in _config.yml,
by ``html_context: {default_mode: auto}``.)
"""


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


def setup(app):
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The two editions of the book: English and Chinese (``language = zh_CN``,
built by bookbuild/build_site.py), each a whole site that links to the other.

- Every page links to the same page in the other editions (a button in the
  article header, and ``<link rel="alternate" hreflang>`` in the head), from
  the table of editions, bookbuild/editions.py. The English site is at the
  top of _build/html, the Chinese one at zh_CN/.
- A translated paragraph is parsed again on its own, as a small document
  that knows nothing of the page's notebook, so myst-nb's ``{glue:text}``
  found no glued value in it. Glue lookups that fail there fall back to the
  notebook of the page being read. That replaces myst-nb's
  ``retrieve_glue_data``, guarded (_ext/pins.py) at myst-nb 1.4.0; it waits
  for executablebooks/MyST-NB#587 (notebooks and Sphinx's translations) and
  docs/upstream/myst-nb-glue-in-translations.md.
- A folded code cell's toggle says "show code" in the page's language
  (MyST-NB's ``nb_code_prompt_show``, from the table of editions).
- The captions of the toctrees that _toc.yml makes ("Chapters", ...) are
  inserted after Sphinx has translated the page, so they are translated
  here (and, when the catalog has no translation, noted as untranslated for
  translation_checks.py).

``is_english`` and ``catalog`` are shared with the other extensions.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain

from bookbuild import editions

TEMPLATES = Path(__file__).parent / "templates"


def is_english(config) -> bool:
    return (config.language or "en") == "en"


def _configure(app, config):
    # First: the book's copies of theme components (_ext/book_zh.py) replace the
    # themes' own, which the themes put on templates_path when they are set up.
    config.templates_path = [str(TEMPLATES), *config.templates_path]
    header = config.html_theme_options.setdefault(
        "article_header_end", ["article-header-buttons.html"]
    )
    if isinstance(header, str):
        header = [h.strip() for h in header.split(",") if h.strip()]
    config.html_theme_options["article_header_end"] = ["language-switch.html", *header]
    code_toggle(config)
    if not is_english(config):
        _patch_glue()


def code_toggle(config) -> None:
    """The words of a folded code cell's toggle, in the edition's language."""
    words = editions.edition(config.language).code_toggle
    if words is not None:
        config.nb_code_prompt_show, config.nb_code_prompt_hide = words


def _edition_link(app, pagename, templatename, context, doctree):
    """Links to the same page in the other editions (bookbuild/editions.py)."""
    here = editions.edition(app.config.language)
    others = []
    for other in editions.EDITIONS:
        if other is not here:
            href = editions.relative_link(pagename, here, other)
            others.append({**vars(other), "href": href})
            context["metatags"] = context.get("metatags", "") + (
                f'\n<link rel="alternate" hreflang="{other.hreflang}" href="{href}" />'
            )
    context["matgrad_other_editions"] = others


def _patch_glue():
    """Glue lookups from a translated paragraph read the page's glued values.

    myst-nb writes a page's glued values to ``<page>.glue.json`` in its output
    folder while it parses the page, before Sphinx's Locale transform parses
    the translated paragraphs; only ``{glue:text}`` (text/plain) is used in
    this book's prose.
    """
    from myst_nb.ext.glue import directives, roles, utils

    if getattr(utils.retrieve_glue_data, "matgrad_fallback", False):
        return
    original = utils.retrieve_glue_data

    def retrieve_glue_data(document, key):
        try:
            return original(document, key)
        except utils.RetrievalError:
            env = getattr(document.settings, "env", None)
            if env is None or "nb_renderer" in document:
                raise
            path = Path(env.mystnb_config.output_folder, f"{env.docname}.glue.json")
            glued = json.loads(path.read_text("utf8")) if path.exists() else {}
            if key not in glued:
                raise
            return utils.VariableOutput(
                data=glued[key]["data"],
                metadata=glued[key].get("metadata", {}),
                nb_renderer=None,
                vtype="glue",
            )

    retrieve_glue_data.matgrad_fallback = True
    for module in (utils, roles, directives):
        module.retrieve_glue_data = retrieve_glue_data


def catalog(env, docname) -> dict[str, str]:
    """The page's translations (msgid → msgstr), as Sphinx's Locale reads them."""
    from sphinx.locale import init as init_locale

    dirs = [str(Path(env.srcdir) / d) for d in env.config.locale_dirs]
    domain = docname_to_domain(docname, env.config.gettext_compact)
    found_catalog, found = init_locale(dirs, env.config.language, domain)
    merged: dict[str, str] = {}
    while found and found_catalog is not None:
        merged = {**getattr(found_catalog, "_catalog", {}), **merged}
        found_catalog = found_catalog._fallback
    return merged


class TranslateToctrees(SphinxTransform):
    """Translate the captions of the toctrees that _toc.yml makes.

    sphinx-external-toc inserts them at priority 100, after the Locale
    transform (20) has translated the rest of the page, so their captions
    ("Chapters", ...) would stay in English; the gettext builder, which reads
    the finished page, does extract them.
    """

    default_priority = 101

    def apply(self, **kwargs):
        if is_english(self.config):
            return
        from sphinx import addnodes

        messages = catalog(self.env, self.env.docname)
        store = getattr(self.env, "matgrad_untranslated", {})
        for toctree in self.document.findall(addnodes.toctree):
            for msg in toctree.extract_original_messages():
                if messages.get(msg, "").strip():
                    toctree.apply_translated_message(msg, messages[msg])
                else:
                    store.setdefault(self.env.docname, []).append(msg)
        self.env.matgrad_untranslated = store


def setup(app):
    from pins import check

    check("editions")  # see the module's docstring
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _edition_link)
    app.add_transform(TranslateToctrees)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

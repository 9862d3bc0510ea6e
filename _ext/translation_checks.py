"""The Chinese edition's untranslated messages, collected so that the tests
can fail on any.

Messages with no translation (missing from the catalog, empty or fuzzy) are
collected just before Sphinx's Locale transform sees them, and the build
writes them to ``untranslated.json`` beside the output folder
(bookbuild/build_site.py prints how many; tests/test_i18n.py fails on any).
Sphinx itself shows such a message in English and says nothing.
(editions.py adds the toctree captions it could not translate.)
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util.nodes import extract_messages

from editions import catalog, is_english


class TranslationCheck(SphinxTransform):
    """Note the page's untranslated messages.

    Runs on every page just before Sphinx's Locale transform (priority 20),
    which looks up the same messages in the same catalog.
    """

    default_priority = 19

    def apply(self, **kwargs):
        if is_english(self.config) or str(self.document.get("source", "")).endswith("<translated>"):
            return  # the English edition, or a translated paragraph being parsed
        messages = catalog(self.env, self.env.docname)
        # (The front matter, still a field list at the top of the document
        # here, is never shown: it becomes docinfo, which Sphinx keeps as page
        # metadata and drops from the page.)
        # (sphinx-exercise titles its exercises and solutions itself, in the
        # page's language; an exercise's own title is a message of its own,
        # see exercise_titles.py.)
        missing = [
            msg
            for node, msg in extract_messages(self.document)
            if not messages.get(msg, "").strip()
            and not _in_front_matter(node)
            and type(node).__name__ not in ("exercise_title", "solution_title")
        ]
        store = getattr(self.env, "matgrad_untranslated", {})
        store[self.env.docname] = sorted(set(missing))
        self.env.matgrad_untranslated = store


def _in_front_matter(node) -> bool:
    while node is not None:
        if isinstance(node, nodes.docinfo) or (
            isinstance(node, nodes.field_list) and isinstance(node.parent, nodes.document)
        ):
            return True
        node = node.parent
    return False


def _purge(app, env, docname):
    getattr(env, "matgrad_untranslated", {}).pop(docname, None)


def _merge(app, env, docnames, other):
    store = getattr(env, "matgrad_untranslated", {})
    for docname in docnames:
        if docname in getattr(other, "matgrad_untranslated", {}):
            store[docname] = other.matgrad_untranslated[docname]
    env.matgrad_untranslated = store


def _write_untranslated(app, exception):
    if exception is not None or is_english(app.config) or app.builder.format != "html":
        return
    store = getattr(app.env, "matgrad_untranslated", {})
    report = {
        doc: msgs for doc, msgs in sorted(store.items()) if msgs and doc in app.env.found_docs
    }
    path = Path(app.outdir).parent / "untranslated.json"
    path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf8")


def setup(app):
    app.add_transform(TranslationCheck)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write_untranslated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

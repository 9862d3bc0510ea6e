"""Translated text no longer drags its message's own document into the doctree.

Sphinx translates a paragraph by parsing the message's translation as a small
document of its own (``sphinx.transforms.i18n.publish_msgstr``) and moving
that document's inline nodes into the page. docutils remembers on each such
node the document it was parsed in (``Node._document``), so the page's
pickled doctree carried every message's document with it: its settings, its
substitutions and its own nodes. The Chinese ``index.doctree`` was 1.9 MB
against the English 63 KB, and unpickling the Chinese doctrees (Sphinx
reads each several times while it writes) took most of the Chinese build.

After a page is read (``doctree-read``, once the Locale transform has run),
every node that points to a document other than the page's forgets it; a
node's ``document`` then comes from its parent, as for any other node. The
HTML is the same.

Guarded (_ext/pins.py): written for Sphinx 7.4.7 and docutils 0.21.2; tested
in tests/test_build.py (the function, and the built doctrees); upstream:
docs/upstream/sphinx-msgstr-document.md.
"""

from __future__ import annotations

from docutils import nodes


def forget_foreign_documents(doctree: nodes.document) -> int:
    """Clear ``_document`` where it names another document; return how many."""
    cleared = 0
    for node in doctree.findall(include_self=False):
        held = node.__dict__.get("_document")
        if held is not None and held is not doctree:
            node._document = None
            cleared += 1
    return cleared


def _on_doctree_read(app, doctree) -> None:
    forget_foreign_documents(doctree)


def setup(app):
    from pins import check

    check("translated_nodes")  # see the module's docstring
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""A translated page keeps one back-link per citation, as its English page does.

sphinxcontrib-bibtex's ``cite`` role records each citation it parses in the
``cite`` domain (``citation_refs``), and the bibliography gives an entry a
back-link to every citation recorded for its page. On a translated page the
role runs again for each message's translation, which Sphinx parses as a small
document of its own (``sphinx.transforms.i18n``): the Chinese references page
recorded each of its 73 citations three times, two of them under ids of those
small documents, so every entry showed "(1,2,3)" where the English entry has
one back-link, and two of the three led to the heading or to another citation.

After a page is read (``doctree-read``, once the Locale transform has run),
this keeps only the records whose id names a citation of the same keys in the
page, each once. An English page has no other records, so it is unchanged.

Guarded (_ext/pins.py): written for sphinxcontrib-bibtex 2.7.0 and Sphinx
7.4.7; tested in tests/test_build.py (the function) and tests/test_editions.py
(the built pages); upstream: docs/upstream/sphinxcontrib-bibtex-translated-backrefs.md.
"""

from __future__ import annotations

from docutils import nodes


def _keys(targets) -> frozenset[str]:
    return frozenset(target.key for target in targets)


def keep_page_citations(citation_refs: list, docname: str, doctree: nodes.document) -> int:
    """Drop ``docname``'s records whose id is not a citation of their keys in
    ``doctree``, and repeated ids; return how many were dropped."""
    from sphinxcontrib.bibtex.citation_target import parse_citation_targets

    seen, kept = set(), []
    for ref in citation_refs:
        if ref.docname == docname:
            node = doctree.ids.get(ref.citation_ref_id)
            live = (
                isinstance(node, nodes.Element)
                and node.get("refdomain") == "cite"
                and _keys(parse_citation_targets(node.get("reftarget", ""))) == _keys(ref.targets)
            )
            if not live or ref.citation_ref_id in seen:
                continue
            seen.add(ref.citation_ref_id)
        kept.append(ref)
    dropped = len(citation_refs) - len(kept)
    citation_refs[:] = kept
    return dropped


def _on_doctree_read(app, doctree) -> None:
    keep_page_citations(app.env.get_domain("cite").citation_refs, app.env.docname, doctree)


def setup(app):
    from pins import check

    check("translated_citations")  # see the module's docstring
    app.connect("doctree-read", _on_doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

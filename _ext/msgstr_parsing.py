"""Parsing a translated message no longer builds docutils settings it throws away.

The Chinese build parses each of its ~1,400 translated messages as a small
MyST document (``sphinx.transforms.i18n.publish_msgstr``). For each one,
myst-parser 3.0's renderer evaluates ``options.get("document",
make_document())``: the default is built even though Sphinx passes the
document, and ``make_document`` builds docutils' default settings from
scratch (an option parser of ~70 options) every time. That was 4.4 s of the
Chinese build's CPU, for documents nobody used.

``make_document`` is replaced by one that builds those default settings once
per parser class and gives each new document its own deep copy (the settings
hold a mutable list of dependencies), so a document that is used gets the
same settings as before. Nothing else changes.

Guarded (_ext/pins.py): written for myst-parser 3.0.1; tested against the
original in tests/test_build.py; upstream: docs/upstream/myst-parser-make-document.md.
"""

from __future__ import annotations

import copy
import functools

from docutils.utils import new_document
from myst_parser.mdit_to_docutils import base

_original = base.make_document


@functools.cache
def _default_settings(parser_cls):
    return _original(parser_cls=parser_cls).settings


def make_document(source_path="notset", parser_cls=base.RSTParser):
    """``myst_parser``'s ``make_document``, with the default settings built once."""
    return new_document(source_path, settings=copy.deepcopy(_default_settings(parser_cls)))


def setup(app):
    from pins import check

    check("msgstr_parsing")  # see the module's docstring
    base.make_document = make_document
    return {"parallel_read_safe": True, "parallel_write_safe": True}

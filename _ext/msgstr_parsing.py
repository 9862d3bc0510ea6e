"""Parsing a translated message no longer builds what it could reuse.

The Chinese build parses each of its ~3,700 translated messages as a small
MyST document (``sphinx.transforms.i18n.publish_msgstr``), through
myst-parser 3.0's ``MystParser.parse``. For each message it used to build
two things from scratch that do not depend on the message:

- docutils' default settings: the renderer evaluates ``options.get("document",
  make_document())``, so the default document is built even though Sphinx
  passes one, and ``make_document`` builds an option parser of ~70 options;
- a markdown-it parser with every MyST plugin (``create_md_parser``): its
  rule chains are compiled anew for every message.

Together these were about a third of the Chinese build's reading time.

``make_document`` is replaced by one that builds those default settings once
per parser class and gives each new document its own deep copy (the settings
hold a mutable list of dependencies). ``MystParser.parse``'s
``create_md_parser`` is replaced by one that builds the parser once per MyST
configuration and returns a shallow copy of it with its own options and its
own renderer (what a parse changes), sharing only the compiled rule chains,
which no parse changes. A document gets what it got before; nothing else
changes.

Guarded (_ext/pins.py): written for myst-parser 3.0.1 and markdown-it-py
3.0.0; tested against the originals in tests/test_build.py; upstream:
docs/upstream/myst-parser-make-document.md.
"""

from __future__ import annotations

import copy
import functools

from docutils.utils import new_document
from markdown_it.utils import OptionsDict
from myst_parser.mdit_to_docutils import base
from myst_parser.parsers import sphinx_ as myst_sphinx

_original = base.make_document
_original_create_md_parser = myst_sphinx.create_md_parser
# (id(config), renderer class) -> (config, parser); the config is kept so that
# its id cannot be reused while its parser is cached.
_parsers: dict[tuple[int, type], tuple[object, object]] = {}


@functools.cache
def _default_settings(parser_cls):
    return _original(parser_cls=parser_cls).settings


def make_document(source_path="notset", parser_cls=base.RSTParser):
    """``myst_parser``'s ``make_document``, with the default settings built once."""
    return new_document(source_path, settings=copy.deepcopy(_default_settings(parser_cls)))


def create_md_parser(config, renderer):
    """``myst_parser``'s ``create_md_parser``, with the parser built once per configuration.

    Each call returns its own parser: a shallow copy of the cached one with
    its own options (a parse sets ``options["document"]``) and a new
    ``renderer`` (which holds a parse's state), so parses may nest.
    """
    key = (id(config), renderer)
    cached = _parsers.get(key)
    if cached is None or cached[0] is not config:
        cached = _parsers[key] = (config, _original_create_md_parser(config, renderer))
    md = copy.copy(cached[1])
    md.options = OptionsDict(cached[1].options)
    md.renderer = renderer(md)
    return md


def setup(app):
    from pins import check

    check("msgstr_parsing")  # see the module's docstring
    base.make_document = make_document
    myst_sphinx.create_md_parser = create_md_parser
    return {"parallel_read_safe": True, "parallel_write_safe": True}

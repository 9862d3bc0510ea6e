"""The book's patches of other packages' internals, each tied to the version it
was written and tested against.

A patch here changes code or data that its package does not offer as an
extension point. Each one checks, when Sphinx loads the extension that makes
it, that the package is still at the version in ``PATCHES``; when a pin in
constraints.txt moves, the build stops with a Sphinx ``ExtensionError`` that
names the patch, so that someone reads the new version's code, re-runs the
patch's test (tests/test_build.py) and then updates the version here, or drops
the patch when the upstream fix it waits for has arrived.
(tests/test_build.py also checks that ``PATCHES`` and constraints.txt agree.)
"""

from __future__ import annotations

from importlib.metadata import version
from typing import NamedTuple


class Patch(NamedTuple):
    what: str  # what is replaced
    versions: dict[str, str]  # distribution -> the version the patch was checked with
    upstream: str  # the issue, pull request or draft report it waits for


PATCHES = {
    "msgstr_parsing": Patch(
        "myst_parser.mdit_to_docutils.base.make_document, and the "
        "create_md_parser that myst_parser.parsers.sphinx_ calls",
        {"myst-parser": "3.0.1", "markdown-it-py": "3.0.0"},
        "docs/upstream/myst-parser-make-document.md",
    ),
    "translated_nodes": Patch(
        "docutils' private Node._document on nodes that Sphinx's publish_msgstr made",
        {"sphinx": "7.4.7", "docutils": "0.21.2"},
        "docs/upstream/sphinx-msgstr-document.md",
    ),
    "translated_citations": Patch(
        "sphinxcontrib-bibtex's cite domain data (citation_refs) after a page is read",
        {"sphinxcontrib-bibtex": "2.7.0", "sphinx": "7.4.7"},
        "docs/upstream/sphinxcontrib-bibtex-translated-backrefs.md",
    ),
    "editions": Patch(
        "myst_nb.ext.glue's retrieve_glue_data (in utils, roles and directives)",
        {"myst-nb": "1.4.0"},
        "https://github.com/executablebooks/MyST-NB/issues/587 and "
        "docs/upstream/myst-nb-glue-in-translations.md",
    ),
    "book_zh": Patch(
        "sphinx.locale.translators' entries for sphinx-book-theme's 'booktheme' catalog",
        {"sphinx": "7.4.7", "sphinx-book-theme": "1.3.0"},
        "docs/upstream/sphinx-book-theme-zh-cn.md",
    ),
    "exercise_titles": Patch(
        "sphinx-exercise's private env.sphinx_exercise_registry, and the titles "
        "its post-transforms make",
        {"sphinx-exercise": "1.2.1"},
        "docs/upstream/sphinx-exercise-translatable-titles.md",
    ),
    "numref_doctrees": Patch(
        "sphinx.domains.std.StandardDomain._resolve_numref_xref (a subclass calls it "
        "with an environment whose get_doctree unpickles each page once)",
        {"sphinx": "7.4.7"},
        "docs/upstream/sphinx-numref-doctrees.md",
    ),
    "zh_search": Patch(
        "sphinx.search.zh.SearchChinese's latin_terms (a list) and split",
        {"sphinx": "7.4.7"},
        "https://github.com/sphinx-doc/sphinx/pull/12995 (a set, in Sphinx 8.1)",
    ),
}


def mismatches(name: str) -> list[str]:
    """The distributions of patch ``name`` that are not at its version."""
    return [
        f"{dist} {version(dist)} (the patch is for {wanted})"
        for dist, wanted in PATCHES[name].versions.items()
        if version(dist) != wanted
    ]


def check(name: str) -> None:
    """Stop the build if patch ``name`` meets a version it was not checked with."""
    from sphinx.errors import ExtensionError

    moved = mismatches(name)
    if moved:
        patch = PATCHES[name]
        raise ExtensionError(
            f"_ext/{name}.py patches {patch.what}, but found {', '.join(moved)}. "
            f"Check the patch against the new code and run its test in "
            f"tests/test_build.py, then update _ext/pins.py (or drop the patch if "
            f"{patch.upstream} is resolved)."
        )

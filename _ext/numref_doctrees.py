"""Numbered references that read each page's doctree once, not once per reference.

Sphinx 7.4's standard domain resolves each ``{numref}`` by unpickling the
whole doctree of the target's page (``env.get_doctree``), only to look up one
node by its id and read the node's type and ids. The book has about ninety
numbered references (to exercises and figures), so each edition unpickled
about ninety doctrees while it wrote the site: 1.7 s of CPU in the English
build and 2.3 s in the Chinese one, whose build is the last step of
``make book``.

This extension replaces the standard domain by a subclass (``add_domain`` with
``override=True``, Sphinx's route for it) whose numbered references see the
environment through ``_DoctreesReadOnce``: the same environment, except that
each page's doctree is unpickled once per write phase and shared by the
references to that page. Nothing else reads those copies, and a numbered
reference only reads them. Sphinx's own code resolves every reference, so
the numbers and links are Sphinx's.

It overrides a private method (``_resolve_numref_xref``), so it is guarded
(_ext/pins.py) at Sphinx 7.4.7; tests/test_build.py builds pages with numbered
references with and without it and compares the HTML.
"""

from __future__ import annotations

from sphinx.domains import std


class _DoctreesReadOnce:
    """``env``, whose ``get_doctree`` unpickles each page once into ``doctrees``
    (read-only copies, for the lookups of numbered references)."""

    def __init__(self, env, doctrees: dict):
        self._env, self._doctrees = env, doctrees

    def __getattr__(self, name):
        return getattr(self._env, name)

    def get_doctree(self, docname: str):
        if docname not in self._doctrees:
            self._doctrees[docname] = self._env.get_doctree(docname)
        return self._doctrees[docname]


class StandardDomain(std.StandardDomain):
    """Sphinx's standard domain; its numbered references share doctrees."""

    def _resolve_numref_xref(self, env, *args, **kwargs):
        doctrees = self.__dict__.setdefault("_numref_doctrees", {})
        return super()._resolve_numref_xref(_DoctreesReadOnce(env, doctrees), *args, **kwargs)


def _forget_doctrees(app, env) -> None:
    """After the pages were (re)read, before any is written: no stale copy."""
    env.get_domain("std").__dict__.pop("_numref_doctrees", None)


def setup(app):
    from pins import check

    check("numref_doctrees")  # see the module's docstring
    app.add_domain(StandardDomain, override=True)
    app.connect("env-updated", _forget_doctrees)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""The book's build pipeline: the decisions and steps behind `make book` and its siblings."""

import sys


def skip_iri_grammar() -> None:
    """Mark ``rfc3987_syntax`` absent, in a process that builds or executes the book.

    jsonschema, which jupyter-book, myst-nb, nbclient and jupyter-cache import,
    imports ``rfc3987_syntax`` when it is installed (JupyterLab's jupyter-events
    installs it), and that module compiles a Lark grammar at import: about 1.4 s
    of CPU in every such process, for checking the "iri" string format, which
    nothing here validates. Marked absent, jsonschema skips that format as it
    does when the module is not installed. Called by the entry points of the
    build's processes (``python -m bookbuild``, ``python -m bookbuild.build_site``)
    before they import those packages; not on import of ``bookbuild``, so that
    no other process (pytest, a kernel) has a module hidden from it.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

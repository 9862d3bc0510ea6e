"""The book's build pipeline: the decisions and steps behind `make book` and its siblings.

One thing here applies to every process of the build and the tests (each
imports this package first): jsonschema, which jupyter-book, myst-nb,
nbclient and jupyter-cache import, imports ``rfc3987_syntax`` when it is
installed (JupyterLab's jupyter-events installs it), and that module
compiles a Lark grammar at import: about 1.4 s of CPU in every such process, for
checking the "iri" string format, which nothing here validates. It is
marked absent, so jsonschema skips that format as it does when the module
is not installed.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

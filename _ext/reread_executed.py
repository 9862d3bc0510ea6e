"""A page that ran again is read again, although its source did not change.

Some pages read the rest of the book (the tolerances, the exercises and the
references collect from every page), so `make book` runs them again when
another page changes (bookbuild/execute_pages.py). Sphinx reads a page again
only when its source or a file it depends on is newer than its last reading,
and would keep the old outputs. Each time a page runs, its stamp
(``bookbuild.pages.stamp``) is touched; this makes the stamp a dependency of
the page, through Sphinx's own ``env.note_dependency``, so each edition reads
the page again after every run.
"""

from __future__ import annotations

import os
from pathlib import Path

from bookbuild.pages import stamp


def note_stamp(app, docname, source) -> None:
    """Make the page's stamp a dependency of the page. A page that has not
    run since the build folder was made gets a stamp dated 1970, so that its
    first run counts as newer (Sphinx checks only the dependencies it noted)."""
    path = stamp(Path(app.env.doc2path(docname, False)))
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, (0, 0))
    app.env.note_dependency(str(path))


def setup(app):
    app.connect("source-read", note_stamp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

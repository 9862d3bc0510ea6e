"""A Sphinx build that starts while the pages still run, and waits for them.

`make book` starts both editions' Sphinx processes as the pages begin to run
(bookbuild/pipeline.py): loading Sphinx, the theme and the extensions, the
configuration and the saved environment takes a few seconds of each
process, which the machine has to spare while the first kernels start. A
process started so has ``MATGRAD_WAIT_FOR_PAGES=1`` in its environment;
once Sphinx is ready to read (the last ``builder-inited`` handler), it reads
one line from its standard input: ``go`` once every page has run and the
assets are made, and it builds; anything else (the end of the input, when a
page failed) ends it with exit status 3, having read and written nothing.
Without the variable, the extension does nothing.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "MATGRAD_WAIT_FOR_PAGES"
GO = "go"
CANCELLED = 3


def wait(app) -> None:
    """Block until the pipeline says ``go``; exit if it says anything else."""
    if sys.stdin.readline().strip() != GO:
        raise SystemExit(CANCELLED)


def setup(app):
    if os.environ.get(VARIABLE) == "1":
        app.connect("builder-inited", wait, priority=900)  # after every other handler
    return {"parallel_read_safe": True, "parallel_write_safe": True}

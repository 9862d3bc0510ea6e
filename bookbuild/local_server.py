"""A folder over HTTP on 127.0.0.1, quietly: the built site for `make serve`,
the tests' browser and the PDF's print."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def http_server(folder: Path, port: int = 0, quiet: bool = True) -> http.server.HTTPServer:
    """A threading server of ``folder`` on 127.0.0.1:``port`` (0: a free port),
    logging no requests when ``quiet``; the caller serves and closes it."""
    handler = _QuietHandler if quiet else http.server.SimpleHTTPRequestHandler
    handler = functools.partial(handler, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


@contextlib.contextmanager
def serving(folder: Path, port: int = 0) -> Iterator[str]:
    """Serve ``folder`` quietly from a background thread; yields its base URL."""
    with http_server(folder, port) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            thread.join()

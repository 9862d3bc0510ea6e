"""What every page says about where it comes from.

- The footer, in the edition's language: the book's version
  (``pyproject.toml``), the date of the build and the licences of the text
  and of the code (bookbuild/editions.py holds the words).
- The theme's source button (the page's MyST source in the repository),
  beside the issue and repository buttons that _config.yml turns on; Jupyter
  Book 1 passes no ``use_source_button`` from _config.yml to the theme.

The date is the day the site was built (UTC), or the day of
``SOURCE_DATE_EPOCH`` when that is set, as reproducible builds do.
"""

from __future__ import annotations

import datetime
import os

from bookbuild import editions, release


def build_date() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
        if epoch
        else datetime.datetime.now(datetime.UTC)
    )
    return moment.date().isoformat()


def _set_footer(app, config):
    row = editions.edition(config.language)
    options = dict(config.html_theme_options or {})
    options["use_source_button"] = True
    options["extra_footer"] = editions.footer(
        row, release.version(), build_date(), release.repository()
    )
    config.html_theme_options = options


def setup(app):
    app.connect("config-inited", _set_footer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Build the book's editions with Sphinx, from the execution cache.

    python -m bookbuild.build_site [--all]       both editions, side by side
    python -m bookbuild.build_site --gettext     the message catalogs (.pot)

`make book` (bookbuild/pipeline.py) runs this after `bookbuild/execute_pages.py`
has filled the execution cache, so no page runs here: both editions read the same cached outputs.

The editions, their folders and cover words are the table of
bookbuild/editions.py.

- English: `_build/html/` (doctrees in `_build/.doctrees`).
- Chinese (zh_CN): built in `_build/zh_CN/` and copied to `_build/html/zh_CN/`.
  It is the same book with `language = zh_CN`: Sphinx's i18n replaces every
  message (heading, paragraph, caption, ...) by its translation from
  `locales/zh_CN/LC_MESSAGES/<page>.po`; code, outputs and glued numbers come
  from the same cache as the English pages. The build writes the messages it
  found no translation for to `_build/zh_CN/untranslated.json`
  (`_ext/translation_checks.py`); this script prints how many, and the tests fail on
  any.
- `singlehtml-en`, `singlehtml-zh_CN`: each edition as one page, for
  `make pdf` (bookbuild/pdf.py), from the same doctrees.
- `--gettext`: `_build/gettext/<page>.pot`, the messages of every page, which
  `make translations` merges into the .po files with sphinx-intl.
- `--drop-obsolete`: after that merge, remove the entries whose English is
  gone from the pages (sphinx-intl keeps them as `#~` comments, which only
  hide what needs translating).

The two editions are built by two processes at once (the machine this targets
has two cores). Each writes its log to `_build/sphinx-<edition>.log`; with
`-W` any warning is an error, and on failure the log is printed. `make book`
starts them before the pages run (``Site``): each loads Sphinx, then waits
until the pages have run (_ext/wait_for_pages.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bookbuild import editions as table
from bookbuild.pages import BUILD, ROOT

CACHE = BUILD / ".jupyter_cache"
LOCALES = ROOT / "locales"


def _builds() -> dict[str, dict]:
    """Each Sphinx build: where it writes, its doctrees, its builder, and what
    differs from _config.yml. Per edition of bookbuild/editions.py (folder
    F: ``_build/F/``): the site (``html``), and the whole book on one page
    (``singlehtml``, which bookbuild/pdf.py prints to PDF) from the same
    configuration and doctrees, so no page is read (or run) again; and the
    message catalogs (``gettext``)."""
    builds = {}
    for row in table.EDITIONS:
        folder = BUILD / row.folder
        overrides = table.sphinx_overrides(row)
        builds[row.language] = {
            "out": folder / "html",
            "doctrees": folder / ".doctrees",
            "builder": "html",
            "overrides": overrides,
        }
        builds[f"singlehtml-{row.language}"] = {
            **builds[row.language],
            "out": folder / "singlehtml",
            "builder": "singlehtml",
        }
        builds[f"linkcheck-{row.language}"] = {
            **builds[row.language],
            "out": folder / "linkcheck",
            "builder": "linkcheck",
        }
    builds["gettext"] = {
        "out": BUILD / "gettext",
        "doctrees": BUILD / "gettext-doctrees",
        "builder": "gettext",
        "overrides": {},
    }
    return builds


SPHINX_BUILDS = _builds()
UNTRANSLATED = "untranslated.json"  # beside each translation's html/ (translation_checks.py)


def sphinx_build(edition: str, fresh: bool, only: list[str] | None = None) -> int:
    """One Sphinx build (in this process), as `jupyter-book build . -W -n --keep-going -q`;
    ``only``: write just these source files (as `sphinx-build ... FILE`)."""
    from jupyter_book.sphinx import build_sphinx

    spec = SPHINX_BUILDS[edition]
    overrides = {
        "external_toc_path": str(ROOT / "_toc.yml"),
        "nitpicky": True,
        "latex_individualpages": False,
        # One execution cache for every edition (myst-nb would otherwise look
        # for it beside each output folder, and run every page again).
        "nb_execution_cache_path": str(CACHE),
        **spec["overrides"],
    }
    if edition == "gettext":
        # myst-nb chooses among an output's formats per builder and knows no
        # choice for gettext: give it the HTML one, so that the messages are
        # those of the pages people read (the figures' alt texts among them).
        from myst_nb.core.render import base_render_priority

        overrides["nb_mime_priority_overrides"] = [
            ("gettext", mime, rank) for mime, rank in base_render_priority()["html"].items()
        ]
    result = build_sphinx(
        ROOT,
        spec["out"],
        noconfig=True,
        path_config=ROOT / "_config.yml",
        confoverrides=overrides,
        doctreedir=spec["doctrees"],
        builder=spec["builder"],
        filenames=[str(ROOT / name) for name in only or []],
        # Write every page, not only the re-read ones: a page that links to a
        # changed section shows that section's new title or number only when
        # it is written again, and Sphinx does not mark it outdated.
        force_all=not only,
        warningiserror=True,
        keep_going=True,
        freshenv=fresh,
        quiet=True,
    )
    if isinstance(result, Exception):
        raise result
    return int(result or 0)


class Editions:
    """Sphinx builds of ``editions``, one process each, side by side.

    With ``wait``, each process loads Sphinx and then waits (the extension
    _ext/wait_for_pages.py) until ``finish()`` says go; ``cancel()`` ends
    them instead, having built nothing. ``finish()`` waits for them and
    prints the log of any that failed; it returns the first failure's exit
    status, or 0."""

    def __init__(
        self, editions: list[str], fresh: bool, only: list[str] | None = None, wait: bool = False
    ):
        BUILD.mkdir(exist_ok=True)
        self.procs = {}
        env = {**os.environ, "MATGRAD_WAIT_FOR_PAGES": "1"} if wait else None
        for edition in editions:
            log = BUILD / f"sphinx-{edition}.log"
            cmd = [sys.executable, "-m", "bookbuild.build_site", "--edition", edition]
            cmd += ["--all"] if fresh else []
            cmd += [arg for name in only or [] for arg in ("--only", name)]
            with open(log, "w") as handle:
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE if wait else subprocess.DEVNULL,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    cwd=ROOT,
                    env=env,
                    text=True,
                )
            self.procs[edition] = proc, log

    def _tell(self, word: str | None) -> None:
        for proc, _ in self.procs.values():
            if proc.stdin is not None and not proc.stdin.closed:
                try:
                    if word is not None:
                        proc.stdin.write(word + "\n")
                    proc.stdin.close()
                except BrokenPipeError:  # it has already ended (finish() prints its log)
                    pass

    def cancel(self) -> None:
        self._tell(None)
        for proc, _ in self.procs.values():
            proc.wait()

    def finish(self) -> int:
        self._tell("go")
        status = 0
        for edition, (proc, log) in self.procs.items():
            if proc.wait() != 0:
                status = status or proc.returncode
                print(f"===== {edition}: Sphinx failed (exit {proc.returncode}); {log}:")
                print(log.read_text())
        return status


def build_editions(editions: list[str], fresh: bool, only: list[str] | None = None) -> int:
    """Build ``editions`` in parallel processes; print the logs of any that failed."""
    return Editions(editions, fresh, only).finish()


def extra_paths() -> list[Path]:
    """The folders of _config.yml's ``html_extra_path`` (`make assets` fills them)."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return [ROOT / entry for entry in config["sphinx"]["config"].get("html_extra_path", [])]


class Site:
    """Both editions of the site, started before the pages have run
    (``make book``): ``finish()`` builds them and publishes the translations."""

    def __init__(self, editions: list[str], fresh: bool):
        # Sphinx drops an html_extra_path folder that does not exist when it
        # loads (with a warning, an error here); `make assets` fills it while
        # the pages run, and Sphinx copies it only when it writes the site.
        for folder in extra_paths():
            folder.mkdir(parents=True, exist_ok=True)
        self.editions = Editions(editions, fresh, wait=True)

    def cancel(self) -> None:
        self.editions.cancel()

    def finish(self) -> int:
        start = time.perf_counter()
        return _published(self.editions.finish(), start)


def publish_translations() -> None:
    """Copy each translation's site into the source edition's, at its folder."""
    for row in table.EDITIONS[1:]:
        published = SPHINX_BUILDS[table.SOURCE.language]["out"] / row.folder
        shutil.rmtree(published, ignore_errors=True)
        shutil.copytree(SPHINX_BUILDS[row.language]["out"], published)


def report_untranslated() -> None:
    for row in table.EDITIONS[1:]:
        path = BUILD / row.folder / UNTRANSLATED
        found = json.loads(path.read_text()) if path.exists() else {}
        count = sum(len(v) for v in found.values())
        if count:
            print(
                f"{row.language}: {count} messages have no translation yet and show in "
                f"English (listed in {path.relative_to(ROOT)}); README.md, "
                f"'Updating the translation', says what to do."
            )


def drop_obsolete() -> None:
    """Remove obsolete (``#~``) entries from every catalog under locales/."""
    from babel.messages.pofile import read_po, write_po

    for path in sorted(LOCALES.rglob("*.po")):
        with open(path, "rb") as handle:
            catalog = read_po(handle)
        if catalog.obsolete:
            print(f"{path.relative_to(ROOT)}: {len(catalog.obsolete)} obsolete entries removed")
            with open(path, "wb") as handle:
                write_po(handle, catalog, width=0, ignore_obsolete=True)


def main(argv: list[str] | None = None, editions=table.LANGUAGES) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="re-read every page")
    parser.add_argument("--gettext", action="store_true", help="write the .pot catalogs")
    parser.add_argument(
        "--linkcheck", action="store_true", help="check the external links of every edition"
    )
    parser.add_argument(
        "--drop-obsolete", action="store_true", help="remove obsolete entries from the catalogs"
    )
    parser.add_argument("--edition", choices=sorted(SPHINX_BUILDS), help=argparse.SUPPRESS)
    parser.add_argument("--only", action="append", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drop_obsolete:
        drop_obsolete()
        return 0

    if args.edition:  # a child process: one build
        os.chdir(ROOT)
        return sphinx_build(args.edition, args.all, args.only)
    if args.gettext:
        return build_editions(["gettext"], fresh=True)
    if args.linkcheck:
        return build_editions([f"linkcheck-{lang}" for lang in editions], fresh=False)

    start = time.perf_counter()
    return _published(build_editions(list(editions), args.all), start)


def _published(status: int, start: float) -> int:
    """After the editions were built (``status`` 0): the translations copied
    into the site, their untranslated messages reported, the time printed."""
    if status == 0:
        publish_translations()
        report_untranslated()
        site = SPHINX_BUILDS[table.SOURCE.language]["out"]
        built = " and ".join(
            f"{(site / row.folder).relative_to(ROOT).as_posix()} ({row.name})"
            for row in table.EDITIONS
        )
        print(f"built {built} in {time.perf_counter() - start:.1f} s")
    return status


if __name__ == "__main__":
    from bookbuild import skip_iri_grammar

    skip_iri_grammar()  # a Sphinx build imports jsonschema (see bookbuild/__init__.py)
    sys.exit(main())

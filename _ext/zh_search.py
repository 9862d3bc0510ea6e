"""Search in the Chinese edition finds the book's terms.

Sphinx's Chinese search splits the text into words with jieba, whose
dictionary cuts 雅可比矩阵 into 雅 / 可比 / 矩阵, so a search for 雅可比
found nothing. The Chinese terms of the Chinese edition's term table,
locales/zh_CN/terms.md (and their parts), go into a jieba user dictionary
(``html_search_options["dict"]``).
jieba prints its progress through its own logger; it is quietened. Its
dictionary cache is kept in the build folder, and the dictionary is loaded
when the configuration is, before the pages are read.

``term_table`` is also what tests/i18n_checks.py checks the translations
against.

Sphinx 7.4's Chinese indexer keeps every Latin word it has seen in a list
and, for each word it stems, asks whether the word is in that list: a scan
that grows with the book (2.6 s of the Chinese build's CPU). The indexer
registered here keeps the same words in a set; what it asks and answers is
unchanged. Sphinx 8.1 does the same (sphinx-doc/sphinx#12995); the subclass
is guarded (_ext/pins.py) at Sphinx 7.4.7 and compared with Sphinx's own
indexer in tests/test_build.py.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path


def _configure(app, config):
    if (config.language or "en") == "en":  # editions.is_english
        return
    try:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        # Its dictionary cache goes to the build folder, not the machine's
        # shared temporary folder (where another user's cache cannot be replaced).
        jieba.dt.tmp_dir = str(Path(app.outdir).parent)
        # Its main dictionary (about a second of CPU) loads now, while
        # `make book` runs the pages (_ext/wait_for_pages.py), not when the
        # search index starts after them: the Chinese build is the last step.
        jieba.initialize()
    except ImportError:  # pragma: no cover - pinned in requirements-dev.txt
        pass
    words = Path(app.outdir).parent / "search-words.txt"
    words.write_text("".join(f"{w} 1000 n\n" for w in search_words(app.srcdir)), "utf8")
    config.html_search_options = {**(config.html_search_options or {}), "dict": str(words)}


def term_table(srcdir) -> list[tuple[str, str]]:
    """(English, Chinese) rows of the term table, locales/zh_CN/terms.md,
    parentheses dropped.

    An English word with two senses has two rows (e.g. *Jacobian*: 雅可比矩阵
    when flattened, 雅可比张量 when not), told apart in parentheses."""
    text = (Path(srcdir) / "locales" / "zh_CN" / "terms.md").read_text("utf8")
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if (
            len(cells) == 2
            and re.search(r"[\u4e00-\u9fff]", cells[1])
            and cells[0] not in ("English", "英文")
        ):
            rows.append(
                (
                    re.sub(r"\s*\(.*\)", "", cells[0]).strip("*"),
                    re.sub(r"\s*[(（].*[)）]", "", cells[1]),
                )
            )
    return rows


def search_words(srcdir) -> list[str]:
    """The Chinese terms and their parts, as words for jieba."""
    words = set()
    for _, chinese in term_table(srcdir):
        words.add(chinese)
        words.update(p for p in re.split(r"[-\s]", chinese) if len(p) > 1)
        if chinese.endswith("矩阵") and len(chinese) > 3:
            words.add(chinese[:-2])  # 雅可比 of 雅可比矩阵
    return sorted(words)


def chinese_indexer():
    """Sphinx's Chinese search language, with its seen Latin words in a set."""
    from sphinx.search import zh

    class SearchChinese(zh.SearchChinese):
        def init(self, options) -> None:
            super().init(options)
            self.latin_terms = set()  # (a class-level list in Sphinx, shared)

        def split(self, input: str) -> list[str]:
            chinese = list(zh.jieba.cut_for_search(input)) if zh.JIEBA else []
            latin1 = [term.strip() for term in self.latin1_letters.findall(input)]
            self.latin_terms.update(latin1)
            return chinese + latin1

    return SearchChinese


def setup(app):
    from pins import check

    check("zh_search")  # see the module's docstring
    app.connect("config-inited", _configure)
    app.add_search_language(chinese_indexer())
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Tables that a page's code prints, in both editions of the book.

``markdown_table`` displays a Markdown table (the English one, which Jupyter
and the English site show) and carries its Chinese twin (the same cells,
Chinese column titles and words) in the output's metadata, as
``matgrad.plotting.show`` does for figures; the Chinese build shows the twin
(_ext/cell_outputs.py). A cell's numbers are computed once, so both editions show
the same ones.

A page can register the Chinese of its column titles and word cells once,
with ``add_chinese`` in a hidden cell, so that its visible code shows only
the English table.
"""

from __future__ import annotations

import re

# The Chinese of table words that pages registered with add_chinese.
_CHINESE: dict[str, str] = {}


def add_chinese(words) -> None:
    """Register the Chinese of table words ({English: Chinese}) for the
    tables this kernel prints from now on: column titles and word cells.

    Registering a word again replaces its Chinese, so a page can run twice.
    """
    if not isinstance(words, dict):
        raise TypeError(f"words must be a dict {{English: Chinese}}, got {type(words).__name__}")
    for english, chinese in words.items():
        if not isinstance(english, str) or not isinstance(chinese, str):
            raise TypeError(f"words must map str to str, got {english!r}: {chinese!r}")
    _CHINESE.update(words)


def _chinese_title(title, words):
    title = str(title)
    if title in words:
        return words[title]
    if re.search(r"[A-Za-z]{2,}", title):
        raise ValueError(
            f"no Chinese for the column title {title!r}: give zh_header= or register it "
            "with add_chinese"
        )
    return title  # a letter, a number or a symbol needs none


def _cells(cells) -> str:
    # A bar in a cell (|x| in math or code) would end the cell: escape it, as
    # GitHub-flavoured tables (and MyST's) allow; the rendered cell shows "|".
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"


def _markdown(header, rows, align) -> str:
    rule = "".join("|---:" if a == "r" else "|---" for a in align) + "|"
    return "\n".join([_cells(header), rule, *map(_cells, rows)])


def markdown_table(header, rows, *, zh_header=None, zh_words=None, align=None):
    """Display a Markdown table, with its Chinese twin in the output's metadata.

    ``header``: the column titles; ``rows``: one sequence of cells per row;
    ``zh_header``: the Chinese column titles (default: each title's Chinese
    registered with ``add_chinese``); ``zh_words``: the Chinese of cells
    that are words ({English: Chinese}), added to the registered ones;
    ``align``: one letter per column, ``"l"`` or ``"r"`` (default: all left).
    """
    from IPython.display import display

    words = {**_CHINESE, **dict(zh_words or {})}
    header = list(header)
    if zh_header is None:
        zh_header = [_chinese_title(title, words) for title in header]
    zh_header = list(zh_header)
    rows = [list(row) for row in rows]
    align = "l" * len(header) if align is None else align
    if len(zh_header) != len(header) or len(align) != len(header):
        raise ValueError(
            f"header has {len(header)} columns, zh_header {len(zh_header)} "
            f"and align {len(align)}: they must match"
        )
    if set(align) - {"l", "r"}:
        raise ValueError(f"align takes 'l' and 'r' only, got {align!r}")
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row has {len(row)} cells, the header {len(header)}: {row}")
    english = _markdown(header, rows, align)
    chinese = _markdown(zh_header, [[words.get(c, c) for c in row] for row in rows], align)
    display(
        {"text/markdown": english, "text/plain": english},
        metadata={"matgrad": {"zh_CN": {"text/markdown": chinese}}},
        raw=True,
    )

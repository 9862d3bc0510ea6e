"""Tables that a page's code prints, in both editions of the book.

``markdown_table`` displays a Markdown table (the English one, which Jupyter
and the English site show) and carries its Chinese twin (the same cells,
Chinese column titles and words) in the output's metadata, as
``matgrad.plotting.show`` does for figures; the Chinese build shows the twin
(_ext/cell_outputs.py). A cell's numbers are computed once, so both editions show
the same ones.
"""

from __future__ import annotations


def _markdown(header, rows, align) -> str:
    rule = "".join("|---:" if a == "r" else "|---" for a in align) + "|"
    lines = ["| " + " | ".join(map(str, header)) + " |", rule]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


def markdown_table(header, rows, *, zh_header, zh_words=None, align=None):
    """Display a Markdown table, with its Chinese twin in the output's metadata.

    ``header``: the column titles; ``rows``: one sequence of cells per row;
    ``zh_header``: the Chinese column titles; ``zh_words``: the Chinese of
    cells that are words ({English: Chinese}); ``align``: one letter per
    column, ``"l"`` or ``"r"`` (default: all left).
    """
    from IPython.display import display

    header, zh_header = list(header), list(zh_header)
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
    words = dict(zh_words or {})
    english = _markdown(header, rows, align)
    chinese = _markdown(zh_header, [[words.get(c, c) for c in row] for row in rows], align)
    display(
        {"text/markdown": english, "text/plain": english},
        metadata={"matgrad": {"zh_CN": {"text/markdown": chinese}}},
        raw=True,
    )

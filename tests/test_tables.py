"""matgrad.tables: a table that code prints, with its Chinese twin."""

from __future__ import annotations

import pytest

import matgrad.tables as tables
from matgrad.tables import add_chinese, markdown_table


def test_the_chinese_twin_has_the_same_cells(shown):
    markdown_table(
        ["branch", "error"],
        [["neither", "1.0e-07"], ["transpose_a", "2.0e-07"]],
        zh_header=["分支", "误差"],
        zh_words={"neither": "都不转置"},
        align="lr",
    )
    ((data, metadata),) = shown
    assert data["text/markdown"] == (
        "| branch | error |\n|---|---:|\n| neither | 1.0e-07 |\n| transpose_a | 2.0e-07 |"
    )
    assert metadata["matgrad"]["zh_CN"]["text/markdown"] == (
        "| 分支 | 误差 |\n|---|---:|\n| 都不转置 | 1.0e-07 |\n| transpose_a | 2.0e-07 |"
    )


def test_a_bar_in_a_cell_stays_in_its_cell(shown):
    from markdown_it import MarkdownIt

    markdown_table(["`Σ|b_k|`", "$|x|$"], [["|a|", "1"]], zh_header=["`Σ|b_k|`", "$|x|$"])
    ((data, metadata),) = shown
    for text in (data["text/markdown"], metadata["matgrad"]["zh_CN"]["text/markdown"]):
        html = MarkdownIt("commonmark").enable("table").render(text)
        assert html.count("<th>") == 2 and html.count("<td>") == 2, html
        assert "<code>Σ|b_k|</code>" in html and "<td>|a|</td>" in html, html


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"zh_header": ["甲"]}, "header has 2 columns, zh_header 1"),
        ({"zh_header": ["甲", "乙"], "align": "l"}, "and align 1"),
        ({"zh_header": ["甲", "乙"], "align": "lc"}, "align takes 'l' and 'r' only"),
    ],
)
def test_bad_tables_are_refused(shown, kwargs, message):
    with pytest.raises(ValueError, match=message):
        markdown_table(["a", "b"], [[1, 2]], **kwargs)


def test_a_short_row_is_refused(shown):
    with pytest.raises(ValueError, match="a row has 1 cells, the header 2"):
        markdown_table(["a", "b"], [[1]], zh_header=["甲", "乙"])


def test_registered_chinese_fills_the_twin(shown, monkeypatch):
    monkeypatch.setattr(tables, "_CHINESE", {})
    add_chinese({"branch": "分支", "neither": "都不转置"})
    add_chinese({"branch": "分支"})  # again, as a page's second run does
    markdown_table(["n", "branch"], [[1, "neither"], [2, "other"]], align="rl")
    ((data, metadata),) = shown
    assert data["text/markdown"].startswith("| n | branch |")
    assert metadata["matgrad"]["zh_CN"]["text/markdown"] == (
        "| n | 分支 |\n|---:|---|\n| 1 | 都不转置 |\n| 2 | other |"
    )


def test_a_title_without_chinese_is_refused(shown, monkeypatch):
    monkeypatch.setattr(tables, "_CHINESE", {})
    with pytest.raises(ValueError, match="no Chinese for the column title 'branch'"):
        markdown_table(["n", "branch"], [[1, 2]])


@pytest.mark.parametrize("words", [["branch"], {"branch": 1}, {2: "二"}])
def test_add_chinese_takes_a_dict_of_strings(words):
    with pytest.raises(TypeError, match="words must"):
        add_chinese(words)

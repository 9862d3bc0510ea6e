"""matgrad.tables: a table that code prints, with its Chinese twin."""

from __future__ import annotations

import pytest

from matgrad.tables import markdown_table


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

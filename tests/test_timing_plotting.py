"""matgrad.timing and matgrad.plotting."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import time

import matplotlib.pyplot as plt
import numpy as np
import pytest

from matgrad.jacobian import flatten_jacobian, matmul_jacobian
from matgrad.plotting import plot_cost, plot_jacobian
from matgrad.timing import (
    best_time,
    fitted_slope,
    format_bytes,
    measure,
    median_time,
)


def test_median_time_counts_calls():
    calls = []
    t = median_time(lambda: calls.append(1), repeat=3, number=4, warmup=2)
    assert t >= 0 and len(calls) == 2 + 3 * 4


def test_measure_best_is_the_minimum_and_not_above_the_median():
    delays = iter([0.0, 0.02, 0.0, 0.01])  # the warm-up call, then three timed calls

    def fn():
        time.sleep(next(delays))

    t = measure(fn, repeat=3, number=1, warmup=1)
    assert t.best <= t.median
    assert t.best < 0.01 <= t.median  # sleeps of 0.02, 0, 0.01: min ~0, median ~0.01


def test_best_time_counts_calls():
    calls = []
    assert best_time(lambda: calls.append(1), repeat=2, number=3, warmup=0) >= 0
    assert len(calls) == 6


@pytest.mark.parametrize("fn", [median_time, best_time, measure])
def test_timers_reject_bad_counts(fn):
    with pytest.raises(ValueError, match="repeat and number"):
        fn(lambda: None, repeat=0)


@pytest.mark.parametrize("kwargs", [{"repeat": 0}, {"number": 0}, {"warmup": -1}])
def test_median_time_rejects_bad_counts(kwargs):
    with pytest.raises(ValueError, match="repeat and number"):
        median_time(lambda: None, **kwargs)


def test_median_time_needs_a_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        median_time(3)


@pytest.mark.parametrize(
    "n, text",
    [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (2**28, "256 MiB"), (2**50 * 16, "16 PiB")],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_plot_jacobian_draws_block_lines():
    a, b = np.ones((5, 3)), np.ones((3, 3))
    ax = plot_jacobian(matmul_jacobian(a, b, wrt="a"))
    image = ax.images[0].get_array()
    assert image.shape == (15, 15)
    # 4 horizontal and 4 vertical separators between the five 3x3 block rows/cols.
    assert len(ax.lines) == 8


def test_plot_jacobian_masks_exact_zeros_only():
    a, b = np.ones((5, 3)), np.array([[1e-3, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    J = matmul_jacobian(a, b, wrt="a")
    plain = plot_jacobian(J).images[0].get_array()
    assert not np.ma.is_masked(plain)
    ax = plot_jacobian(J, mask_zeros=True)
    image = ax.images[0].get_array()
    np.testing.assert_array_equal(np.ma.getmaskarray(image), flatten_jacobian(J) == 0)
    assert image[0, 0] == 1e-3 and not np.ma.getmaskarray(image)[0, 0]  # small, kept
    assert ax.patch.get_hatch() == "////"
    with pytest.raises(TypeError, match="mask_zeros must be True or False"):
        plot_jacobian(J, mask_zeros="yes")
    plt.close("all")


def test_plot_cost_guides_and_errors():
    ax = plot_cost([1, 2, 4], {"a": [1, 8, 64], "b": [1, 4, 16]}, slopes={"a": 3})
    guide = ax.lines[1].get_ydata()
    np.testing.assert_allclose(guide, [1, 8, 64])  # slope 3 through a's last point
    with pytest.raises(ValueError, match="not plotted"):
        plot_cost([1, 2], {"a": [1, 2]}, slopes={"c": 2})
    with pytest.raises(ValueError, match="has shape"):
        plot_cost([1, 2, 3], {"a": [1, 2]})


# ---- the Chinese twin of each figure (matgrad.plotting.show) ---------------


def _texts(ax):
    """The words and numbers of a figure's axes: labels, title, legend, ticks."""
    fig = ax.figure
    texts = [
        t.get_text()
        for a in fig.axes
        for t in (a.xaxis.label, a.yaxis.label, a.title, *a.get_xticklabels(), *a.get_yticklabels())
    ]
    legend = ax.get_legend()
    return texts + ([t.get_text() for t in legend.get_texts()] if legend else [])


def test_show_displays_english_with_the_chinese_twin_in_the_metadata(monkeypatch, shown):
    import base64

    import matplotlib.pyplot as plt

    from matgrad.plotting import show

    ax = plot_cost([4, 8, 16], {"one VJP": [1.0, 2.0, 4.0]}, slopes={"one VJP": 1})
    english = _texts(ax)
    chinese = _texts(ax.figure.matgrad_redraw("zh_CN", {"one VJP": "一次 VJP"}))
    assert "time (s)" in english and "时间（秒）" in chinese and "一次 VJP" in chinese
    numbers = [t for t in english if not any(c.isalpha() for c in t.replace("$", ""))]
    assert numbers and all(t in chinese for t in numbers)  # the same ticks
    plt.close("all")
    ax = plot_cost([4, 8, 16], {"one VJP": [1.0, 2.0, 4.0]})
    show({"one VJP": "一次 VJP"})
    ((data, metadata),) = shown
    png = base64.b64decode
    assert png(data["image/png"]).startswith(b"\x89PNG")
    twin = metadata["matgrad"]["zh_CN"]["image/png"]
    assert png(twin).startswith(b"\x89PNG") and twin != data["image/png"]
    assert not plt.get_fignums()  # both figures closed


def test_plot_jacobian_has_chinese_labels():
    import re

    ax = plot_jacobian(
        matmul_jacobian(np.ones((5, 3)), np.ones((3, 3)), wrt="a"),
        title=r"$\partial Y / \partial T$",
        lang="zh_CN",
    )
    labels = [ax.get_xlabel(), ax.get_ylabel(), ax.figure.axes[1].get_ylabel()]
    assert all(re.search("[\u4e00-\u9fff]", label) for label in labels), labels
    assert "(5, 3)" in ax.get_ylabel() and ax.get_title() == r"$\partial Y / \partial T$"


def test_chinese_figure_needs_every_word_and_a_known_language():
    with pytest.raises(ValueError, match="no Chinese for the figure text 'forward'"):
        plot_cost([1, 2, 4], {"forward": [1, 2, 4]}, lang="zh_CN")
    with pytest.raises(ValueError, match="lang must be one of"):
        plot_cost([1, 2, 4], {"a": [1, 2, 4]}, lang="fr")


def test_show_needs_a_figure_of_this_module(monkeypatch, shown):
    import matplotlib.pyplot as plt

    from matgrad.plotting import show

    plt.figure()
    with pytest.raises(ValueError, match="drawn by plot_jacobian or plot_cost"):
        show()
    plt.close("all")


def test_without_a_cjk_font_the_metadata_says_why(monkeypatch, shown):
    import matgrad.plotting as plotting

    monkeypatch.setattr(plotting, "cjk_font", lambda: None)
    plot_cost([1, 2, 4], {"a": [1, 2, 4]})
    plotting.show({"a": "甲"})
    ((_, metadata),) = shown
    assert metadata["matgrad"]["zh_CN"] is None
    assert "fonts-noto-cjk" in metadata["matgrad"]["error"]


def test_a_cjk_font_is_installed_for_the_build():
    """The Chinese figures are drawn with it (.ci/run installs fonts-noto-cjk)."""
    from matgrad.plotting import cjk_font

    assert cjk_font() is not None


def test_plot_cost_draws_two_guides_for_a_pair_of_powers():
    ax = plot_cost([1, 2, 4], {"a": [1, 16, 256]}, slopes={"a": (4, 5)})
    guides = [line.get_ydata() for line in ax.lines[1:]]
    np.testing.assert_allclose(guides[0], [1, 16, 256])
    np.testing.assert_allclose(guides[1], [256 / 4**5, 256 / 2**5, 256])


def test_fitted_slope():
    sizes = [2, 4, 8, 16]
    assert fitted_slope(sizes, [s**4.5 for s in sizes]) == pytest.approx(4.5)
    with pytest.raises(ValueError, match="equal shape"):
        fitted_slope([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="last must be"):
        fitted_slope([1, 2, 3], [1, 2, 3], last=4)
    with pytest.raises(ValueError, match="positive"):
        fitted_slope([1, 2, 3], [1, 0, 3])


def test_plot_chain_order_draws_the_factors_and_three_arrows():
    from matplotlib.patches import FancyArrowPatch, Rectangle

    from matgrad.plotting import plot_chain_order

    ax = plot_chain_order()
    assert sum(isinstance(p, Rectangle) for p in ax.patches) == 3
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3
    texts = [t.get_text() for t in ax.texts]
    assert any("against the program" in t for t in texts)
    ax = plot_chain_order(words={"left": "左端"})
    assert "左端" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="unknown keys"):
        plot_chain_order(words={"up": "x"})
    with pytest.raises(ValueError, match="at least two"):
        plot_chain_order([("$J$", "1x1", "step")])

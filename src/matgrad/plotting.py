"""Figures for the book: Jacobian heatmaps and cost curves, in both editions.

Each figure is drawn twice from the same data: in English, and in Chinese for
the book's Chinese edition. A page draws it with ``plot_jacobian`` or
``plot_cost`` and shows it with ``show`` (instead of ``plt.show()``), giving
the Chinese for the words it chose itself (series labels, a custom axis
label); the words these functions choose are in ``ZH_WORDS``. ``show``
displays the English figure, which is what Jupyter and the English site
show, and carries the Chinese one in the output's metadata
(``{"matgrad": {"zh_CN": {"image/png": ...}}}``), which the Chinese build
shows instead (_ext/cell_outputs.py). The Chinese figure needs a CJK font that
matplotlib finds (Noto Sans CJK, Debian's fonts-noto-cjk); without one the
metadata says so and the Chinese build stops with that message, rather than
drawing boxes.
"""

from __future__ import annotations

import base64
import math
import re

import numpy as np

from .jacobian import flatten_jacobian

LANGUAGES = ("en", "zh_CN")
# Fonts for the Chinese figures, the first that matplotlib knows is used
# (after DejaVu Sans, which draws the digits and Latin letters as in English).
CJK_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC", "Noto Sans SC", "WenQuanYi Zen Hei")
# The Chinese of the words the functions below choose.
ZH_WORDS = {
    "time (s)": "时间（秒）",
    "n (matrices are n x n)": "n（矩阵为 n × n）",
    "partial derivative": "偏导数",
    "input entry (row-major over shape {})": "输入元素（按形状 {} 行优先编号）",
    "output entry (row-major over {})": "输出元素（按形状 {} 行优先编号）",
}


def _words(lang, words):
    """The text of a figure in ``lang``: English as given, Chinese from
    ``words`` (the page's) or ``ZH_WORDS``; math ($...$) needs none."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    words = dict(words or {})

    def text(english, *values):
        if english is None:
            return None
        if lang == "en":
            return english.format(*values)
        if english in words:
            return words[english].format(*values)
        if english in ZH_WORDS:
            return ZH_WORDS[english].format(*values)
        if not re.search(r"[A-Za-z]{2,}", re.sub(r"\$[^$]*\$", "", english)):
            return english.format(*values)  # math and numbers only
        raise ValueError(f"no Chinese for the figure text {english!r}: give it in words=")

    return text


def _remember(ax, function, args, kwargs):
    """Let ``show`` draw the same figure again, in the other language."""
    if kwargs.get("ax") is None:
        ax.figure.matgrad_redraw = lambda lang, words: function(
            *args, **{**kwargs, "lang": lang, "words": words}
        )


def _axes(ax, figsize):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def plot_jacobian(
    J,
    out_ndim=None,
    *,
    ax=None,
    title=None,
    cmap="RdBu_r",
    figsize=(4.2, 4.2),
    lang="en",
    words=None,
    mask_zeros=False,
):
    """Heatmap of a Jacobian array flattened row-major, with its blocks outlined.

    Rows are output entries, columns input entries.  Thin lines mark where the
    leading index of the output (rows) and of the input (columns) changes, so
    the Kronecker-block structure of a matmul Jacobian is visible.  Zero is
    white; the colour scale is symmetric.  With ``mask_zeros=True`` the
    entries that are exactly zero are not coloured but hatched in grey, so
    that they cannot be mistaken for small non-zero entries (which are
    near-white).  ``lang`` and ``words``: see ``show``.
    """
    if not isinstance(mask_zeros, bool):
        raise TypeError(f"mask_zeros must be True or False, got {mask_zeros!r}")
    text, given_ax = _words(lang, words), ax
    J = np.asarray(J)
    M = flatten_jacobian(J, out_ndim)
    k = J.ndim // 2 if out_ndim is None else out_ndim
    out_shape, in_shape = J.shape[:k], J.shape[k:]
    ax = _axes(ax, figsize)
    vmax = float(np.abs(M).max()) or 1.0
    shown = np.ma.masked_equal(M, 0) if mask_zeros else M
    im = ax.imshow(shown, cmap=cmap, vmin=-vmax, vmax=vmax, interpolation="nearest")
    if mask_zeros:  # masked pixels are transparent: the hatched axes show through
        ax.patch.set_facecolor("white")
        ax.patch.set_hatch("////")
        ax.patch.set_edgecolor("0.75")
    row_block = math.prod(out_shape[1:]) if len(out_shape) > 1 else 0
    col_block = math.prod(in_shape[1:]) if len(in_shape) > 1 else 0
    for pos in range(row_block, M.shape[0], row_block or M.shape[0]):
        ax.axhline(pos - 0.5, color="0.35", lw=0.8)
    for pos in range(col_block, M.shape[1], col_block or M.shape[1]):
        ax.axvline(pos - 0.5, color="0.35", lw=0.8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # entry indices are integers
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(text("input entry (row-major over shape {})", in_shape))
    ax.set_ylabel(text("output entry (row-major over {})", out_shape))
    if title:
        ax.set_title(text(title))
    ax.figure.colorbar(im, ax=ax, shrink=0.8, label=text("partial derivative"))
    _remember(
        ax,
        plot_jacobian,
        (J, out_ndim),
        dict(ax=given_ax, title=title, cmap=cmap, figsize=figsize, mask_zeros=mask_zeros),
    )
    return ax


def plot_cost(
    sizes,
    series: dict,
    *,
    ax=None,
    slopes=None,
    ylabel="time (s)",
    xlabel="n (matrices are n x n)",
    title=None,
    figsize=(5.5, 3.8),
    lang="en",
    words=None,
):
    """Log-log cost curves, one per entry of ``series`` ({label: values}).

    ``slopes`` maps a series label to a power p, or to a sequence of powers:
    for each, a dashed guide of slope p is drawn through that series' last
    point (the largest size, where the asymptotic cost shows) over the three
    largest sizes, labelled ``n^p``.  Two powers bracket a measurement, for
    example the memory (the size of the result) and the work of a method.
    The x ticks are the measured sizes.  ``lang`` and ``words``: see ``show``.
    """
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    text, given_ax = _words(lang, words), ax

    sizes = np.asarray(sizes, dtype=float)
    slopes = dict(slopes or {})
    unknown = set(slopes) - set(series)
    if unknown:
        raise ValueError(f"slopes names series that are not plotted: {sorted(unknown)}")
    ax = _axes(ax, figsize)
    markers = "osD^v<>"
    for (label, values), marker in zip(series.items(), markers * 3, strict=False):
        values = np.asarray(values, dtype=float)
        if values.shape != sizes.shape:
            raise ValueError(f"series {label!r} has shape {values.shape}, sizes {sizes.shape}")
        (line,) = ax.loglog(sizes, values, marker=marker, label=text(label))
        powers = slopes.get(label, ())
        for p in np.atleast_1d(powers).tolist():
            span = sizes[-3:]
            guide = values[-1] * (span / span[-1]) ** p
            ax.loglog(span, guide, ls="--", color=line.get_color(), lw=1, alpha=0.6)
            ax.annotate(
                f"$n^{{{p:g}}}$",
                (span[0], guide[0]),
                color=line.get_color(),
                fontsize=10,
                xytext=(-4, -4),
                textcoords="offset points",
                ha="right",
            )
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(text(xlabel))
    ax.set_ylabel(text(ylabel))
    if title:
        ax.set_title(text(title))
    ax.legend(fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    _remember(
        ax,
        plot_cost,
        (sizes, series),
        dict(
            ax=given_ax, slopes=slopes, ylabel=ylabel, xlabel=xlabel, title=title, figsize=figsize
        ),
    )
    return ax


def cjk_font() -> str | None:
    """The first of ``CJK_FONTS`` that matplotlib knows, or None."""
    from matplotlib import font_manager

    known = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in known), None)


def _png(fig) -> str:
    """The figure as the inline backend shows it: PNG, base64 (as in a notebook)."""
    from IPython.core.pylabtools import print_figure

    return base64.b64encode(print_figure(fig, "png", bbox_inches="tight")).decode("ascii")


def show(words=None, *, fig=None):
    """Display a figure of ``plot_jacobian`` or ``plot_cost`` in English, with
    its Chinese twin in the output's metadata.

    ``words`` maps the English texts that the page gave the figure (series
    labels, a custom axis label or title) to their Chinese; the twin is drawn
    from the same call, data and numbers with ``lang="zh_CN"``. ``fig`` is
    the current figure by default. Both figures are closed afterwards.
    """
    import matplotlib.pyplot as plt
    from IPython.display import display

    fig = plt.gcf() if fig is None else fig
    redraw = getattr(fig, "matgrad_redraw", None)
    if redraw is None:
        raise ValueError(
            "show() needs a figure drawn by plot_jacobian or plot_cost "
            "(without ax=); this one was not"
        )
    font = cjk_font()
    if font is None:
        twin = {
            "zh_CN": None,
            "error": (
                "matplotlib found no CJK font (one of " + ", ".join(CJK_FONTS) + "), so the "
                "Chinese figure was not drawn: install one (Debian/Ubuntu: apt-get install "
                "fonts-noto-cjk) and run make book again"
            ),
        }
    else:
        with plt.rc_context({"font.family": ["DejaVu Sans", font]}):
            zh_fig = redraw("zh_CN", words).figure
            twin = {"zh_CN": {"image/png": _png(zh_fig)}}
        plt.close(zh_fig)
    display({"image/png": _png(fig), "text/plain": repr(fig)}, metadata={"matgrad": twin}, raw=True)
    plt.close(fig)


#: The words of :func:`plot_chain_order` in Chinese (``lang="zh_CN"``). No $math$:
#: matplotlib draws a string with math in its math fonts, which have no CJK glyphs.
CHAIN_ORDER_WORDS_ZH = {
    "program": "程序顺序：第 1 步，然后第 2 步，然后第 3 步",
    "forward": "前向累积：从右端开始（先算 J₂J₁），与程序同向",
    "reverse": "反向累积：从左端开始（先算 J₃J₂），与程序反向",
    "left": "左端",
    "right": "右端",
}
#: The words of :func:`plot_chain_order`, so that another edition can pass its own.
CHAIN_ORDER_WORDS = {
    "program": "program order: step 1, then 2, then 3",
    "forward": "forward accumulation: start at the right end ($J_2 J_1$ first), with the program",
    "reverse": "reverse accumulation: start at the left end ($J_3 J_2$ first), against the program",
    "left": "left end",
    "right": "right end",
}


def plot_chain_order(factors=None, *, words=None, ax=None, figsize=(7.0, 3.0), lang="en"):
    """Draw a chain of Jacobians as written, with the two directions kept apart.

    ``factors`` lists ``(name, shape, step)`` from the left of the written
    product to its right (default: the chain J3 J2 J1 of chapter 03).  The
    written product puts the program's first step on the *right*, so the
    figure shows the program's direction above the factors, and below them
    which end each accumulation starts from.  ``words`` overrides entries of
    :data:`CHAIN_ORDER_WORDS`; with ``lang="zh_CN"`` the words are
    :data:`CHAIN_ORDER_WORDS_ZH` (what ``show`` draws for the Chinese twin).
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    given = dict(factors=factors, ax=ax, figsize=figsize)
    zh = lang == "zh_CN"
    if factors is None:
        formulas = (
            ["L = ΣZ²", "Z = tanh(Y)", "Y = TB"]
            if zh
            else ["$L = \\sum Z^2$", "$Z = \\tanh(Y)$", "$Y = TB$"]
        )
        step = "第 {} 步：{}" if zh else "step {}: {}"
        factors = [
            ("$J_3$", "1×15", step.format(3, formulas[0])),
            ("$J_2$", "15×15", step.format(2, formulas[1])),
            ("$J_1$", "15×15", step.format(1, formulas[2])),
        ]
    if zh:
        words = None  # show() passes its own mapping; the Chinese words are fixed
    if len(factors) < 2:
        raise ValueError(f"factors must list at least two factors, got {len(factors)}")
    unknown = set(words or {}) - set(CHAIN_ORDER_WORDS)
    if unknown:
        raise ValueError(
            f"words has unknown keys {sorted(unknown)}; known: {sorted(CHAIN_ORDER_WORDS)}"
        )
    text = {**(CHAIN_ORDER_WORDS_ZH if zh else CHAIN_ORDER_WORDS), **(words or {})}
    ax = _axes(ax, figsize)
    k = len(factors)
    for i, (name, shape, step) in enumerate(factors):
        ax.add_patch(Rectangle((i * 2.2, 0), 1.6, 1.2, fill=False, lw=1.5))
        ax.text(i * 2.2 + 0.8, 0.75, name, ha="center", va="center", fontsize=15)
        ax.text(i * 2.2 + 0.8, 0.3, shape, ha="center", va="center", fontsize=9)
        ax.text(i * 2.2 + 0.8, 1.45, step, ha="center", va="bottom", fontsize=9)
    right = (k - 1) * 2.2 + 1.6

    def arrow(x0, x1, y, label, color, style="-|>"):
        ax.add_patch(
            FancyArrowPatch(
                (x0, y), (x1, y), arrowstyle=style, mutation_scale=16, color=color, lw=1.8
            )
        )
        ax.text((x0 + x1) / 2, y + 0.12, label, ha="center", va="bottom", fontsize=9, color=color)

    arrow(right, 0, 2.15, text["program"], "0.25")
    arrow(right, 0, -0.7, text["forward"], "tab:blue")
    arrow(0, right, -1.4, text["reverse"], "tab:red")
    ax.text(0, -0.2, text["left"], ha="left", va="top", fontsize=8, color="0.4")
    ax.text(right, -0.2, text["right"], ha="right", va="top", fontsize=8, color="0.4")
    ax.set_xlim(-0.3, right + 0.3)
    ax.set_ylim(-1.6, 2.7)
    ax.set_axis_off()
    if given["ax"] is None:
        ax.figure.matgrad_redraw = lambda lang, _words: plot_chain_order(
            given["factors"],
            words=None if lang == "zh_CN" else words,
            ax=None,
            figsize=figsize,
            lang=lang,
        )
    return ax

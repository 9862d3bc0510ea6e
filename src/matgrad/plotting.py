"""Figures for the book: Jacobian heatmaps and cost curves."""

from __future__ import annotations

import math

import numpy as np

from .jacobian import flatten_jacobian


def _axes(ax, figsize):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def plot_jacobian(J, out_ndim=None, *, ax=None, title=None, cmap="RdBu_r", figsize=(4.2, 4.2)):
    """Heatmap of a Jacobian array flattened row-major, with its blocks outlined.

    Rows are output entries, columns input entries.  Thin lines mark where the
    leading index of the output (rows) and of the input (columns) changes, so
    the Kronecker-block structure of a matmul Jacobian is visible.  Zero is
    white; the colour scale is symmetric.
    """
    J = np.asarray(J)
    M = flatten_jacobian(J, out_ndim)
    k = J.ndim // 2 if out_ndim is None else out_ndim
    out_shape, in_shape = J.shape[:k], J.shape[k:]
    ax = _axes(ax, figsize)
    vmax = float(np.abs(M).max()) or 1.0
    im = ax.imshow(M, cmap=cmap, vmin=-vmax, vmax=vmax, interpolation="nearest")
    row_block = math.prod(out_shape[1:]) if len(out_shape) > 1 else 0
    col_block = math.prod(in_shape[1:]) if len(in_shape) > 1 else 0
    for pos in range(row_block, M.shape[0], row_block or M.shape[0]):
        ax.axhline(pos - 0.5, color="0.35", lw=0.8)
    for pos in range(col_block, M.shape[1], col_block or M.shape[1]):
        ax.axvline(pos - 0.5, color="0.35", lw=0.8)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # entry indices are integers
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"input entry (row-major over shape {in_shape})")
    ax.set_ylabel(f"output entry (row-major over {out_shape})")
    if title:
        ax.set_title(title)
    ax.figure.colorbar(im, ax=ax, shrink=0.8, label="partial derivative")
    return ax


def plot_cost(sizes, series: dict, *, ax=None, slopes=None, ylabel="time (s)",
              xlabel="n (matrices are n x n)", title=None, figsize=(5.5, 3.8)):
    """Log-log cost curves, one per entry of ``series`` ({label: values}).

    ``slopes`` maps a series label to a power p, or to a sequence of powers:
    for each, a dashed guide of slope p is drawn through that series' last
    point (the largest size, where the asymptotic cost shows) over the three
    largest sizes, labelled ``n^p``.  Two powers bracket a measurement, for
    example the memory (the size of the result) and the work of a method.
    The x ticks are the measured sizes.
    """
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    sizes = np.asarray(sizes, dtype=float)
    slopes = dict(slopes or {})
    unknown = set(slopes) - set(series)
    if unknown:
        raise ValueError(f"slopes names series that are not plotted: {sorted(unknown)}")
    ax = _axes(ax, figsize)
    markers = "osD^v<>"
    for (label, values), marker in zip(series.items(), markers * 3):
        values = np.asarray(values, dtype=float)
        if values.shape != sizes.shape:
            raise ValueError(f"series {label!r} has shape {values.shape}, sizes {sizes.shape}")
        (line,) = ax.loglog(sizes, values, marker=marker, label=label)
        powers = slopes.get(label, ())
        for p in np.atleast_1d(powers).tolist():
            span = sizes[-3:]
            guide = values[-1] * (span / span[-1]) ** p
            ax.loglog(span, guide, ls="--", color=line.get_color(), lw=1, alpha=0.6)
            ax.annotate(f"$n^{{{p:g}}}$", (span[0], guide[0]), color=line.get_color(),
                        fontsize=10, xytext=(-4, -4), textcoords="offset points", ha="right")
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    return ax


#: The words of :func:`plot_chain_order`, so that another edition can pass its own.
CHAIN_ORDER_WORDS = {
    "program": "program order: step 1, then 2, then 3",
    "forward": "forward accumulation: start at the right end ($J_2 J_1$ first), with the program",
    "reverse": "reverse accumulation: start at the left end ($J_3 J_2$ first), against the program",
    "left": "left end",
    "right": "right end",
}


def plot_chain_order(factors=None, *, words=None, ax=None, figsize=(7.0, 3.0)):
    """Draw a chain of Jacobians as written, with the two directions kept apart.

    ``factors`` lists ``(name, shape, step)`` from the left of the written
    product to its right (default: the chain J3 J2 J1 of chapter 03).  The
    written product puts the program's first step on the *right*, so the
    figure shows the program's direction above the factors, and below them
    which end each accumulation starts from.  ``words`` overrides entries of
    :data:`CHAIN_ORDER_WORDS`.
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if factors is None:
        factors = [("$J_3$", "1×15", "step 3: $L = \\sum Z^2$"),
                   ("$J_2$", "15×15", "step 2: $Z = \\tanh(Y)$"),
                   ("$J_1$", "15×15", "step 1: $Y = TB$")]
    if len(factors) < 2:
        raise ValueError(f"factors must list at least two factors, got {len(factors)}")
    unknown = set(words or {}) - set(CHAIN_ORDER_WORDS)
    if unknown:
        raise ValueError(f"words has unknown keys {sorted(unknown)}; known: "
                         f"{sorted(CHAIN_ORDER_WORDS)}")
    text = {**CHAIN_ORDER_WORDS, **(words or {})}
    ax = _axes(ax, figsize)
    k = len(factors)
    for i, (name, shape, step) in enumerate(factors):
        ax.add_patch(Rectangle((i * 2.2, 0), 1.6, 1.2, fill=False, lw=1.5))
        ax.text(i * 2.2 + 0.8, 0.75, name, ha="center", va="center", fontsize=15)
        ax.text(i * 2.2 + 0.8, 0.3, shape, ha="center", va="center", fontsize=9)
        ax.text(i * 2.2 + 0.8, 1.45, step, ha="center", va="bottom", fontsize=9)
    right = (k - 1) * 2.2 + 1.6

    def arrow(x0, x1, y, label, color, style="-|>"):
        ax.add_patch(FancyArrowPatch((x0, y), (x1, y), arrowstyle=style,
                                     mutation_scale=16, color=color, lw=1.8))
        ax.text((x0 + x1) / 2, y + 0.12, label, ha="center", va="bottom",
                fontsize=9, color=color)

    arrow(right, 0, 2.15, text["program"], "0.25")
    arrow(right, 0, -0.7, text["forward"], "tab:blue")
    arrow(0, right, -1.4, text["reverse"], "tab:red")
    ax.text(0, -0.2, text["left"], ha="left", va="top", fontsize=8, color="0.4")
    ax.text(right, -0.2, text["right"], ha="right", va="top", fontsize=8, color="0.4")
    ax.set_xlim(-0.3, right + 0.3)
    ax.set_ylim(-1.6, 2.7)
    ax.set_axis_off()
    return ax

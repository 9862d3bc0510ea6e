"""The explorer of the puzzle's Jacobian: a Vega-Lite chart that needs no kernel.

The reader points at (or chooses with the sliders) an entry of the 15x15
flattened Jacobian of ``Y = T @ B`` with respect to ``T`` and reads its
``(i, j, k, l)`` and ``dY_ij/dT_kl``; chooses a seed ``G`` (ones, one-hot at a
chosen ``(i, j)``, or a random ``G``) and sees each row ``(i, j)`` of the
Jacobian weighted by ``G_ij`` and the columns summed: the gradient
``sum_ij G_ij dY_ij/dT_kl``, which is ``G @ B.T``.

The chart is data plus a declarative Vega-Lite specification (made with
Altair): the weighting and the sum are Vega-Lite transforms that the browser
evaluates. :func:`explorer_table` is that data, and :func:`explorer_gradient`
the same contraction in NumPy, so that a test can check what the chart
computes. :func:`show_explorer` displays it in a notebook as Vega-Lite (which
JupyterLab draws), with a static PNG of the same chart (vl-convert, no
browser) for the PDF and for readers without scripts, and the Chinese twin
in the output's metadata like :func:`matgrad.plotting.show`. The book's
Sphinx extension ``_ext/vega_explorer.py`` renders the Vega-Lite output with
the Vega JavaScript that the site serves itself.
"""

from __future__ import annotations

import base64
import re

import numpy as np

from ._checks import as_array

#: The notebook MIME type of the chart (Vega-Lite 5, which JupyterLab 4 draws).
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
SEEDS = ("ones", "one-hot", "random")
#: The Chinese of the explorer's words (``lang="zh_CN"``).
EXPLORER_WORDS_ZH = {
    "seed G": "种子 G",
    "one-hot i": "独热 i",
    "one-hot j": "独热 j",
    "entry i": "元素 i",
    "entry j": "元素 j",
    "entry k": "元素 k",
    "entry l": "元素 l",
    "ones": "全 1",
    "one-hot": "独热",
    "random": "随机",
    "output entry (i, j)": "输出元素 (i, j)",
    "input entry (k, l)": "输入元素 (k, l)",
    "weight G_ij": "权重 G_ij",
    "product": "乘积",
    "G_ij × ∂Y_ij/∂T_kl": "G_ij × ∂Y_ij/∂T_kl",
    "gradient: the columns summed over i, j": "梯度：按列对 i、j 求和",
    "row k": "第 k 行",
    "column l": "第 l 列",
    "value (one colour scale)": "值（共用一个色标）",
    "seed G: ": "种子 G：",
    "title": "Y = TB 的雅可比矩阵：选择一个种子 G，指向一个元素",
    "description": (
        "Y = TB 关于 T 的 15 × 15 雅可比矩阵，每一行按种子 G 的元素加权，各列之和是 5 × 3 的梯度。"
    ),
}
EXPLORER_WORDS = {key: key for key in EXPLORER_WORDS_ZH} | {
    "title": "The Jacobian of Y = TB: choose a seed G, point at an entry",
    "description": (
        "The 15 by 15 Jacobian of Y = TB with respect to T, each row weighted by "
        "the entry of the seed G, and the 5 by 3 gradient made of its column sums."
    ),
}


def _operands(T, B, G):
    T, B = as_array(T, "T"), as_array(B, "B")
    if T.ndim != 2 or B.ndim != 2 or T.shape[1] != B.shape[0]:
        raise ValueError(
            f"T and B must be matrices with T @ B defined, got {T.shape} and {B.shape}"
        )
    out = (T.shape[0], B.shape[1])
    if G is None:
        G = np.round(np.random.default_rng(0).standard_normal(out), 2)
    G = as_array(G, "G")
    if G.shape != out:
        raise ValueError(f"G must have the shape of T @ B, {out}, got {G.shape}")
    return T, B, G


def seed_matrix(seed: str, shape, *, at=(0, 0), G=None) -> np.ndarray:
    """The seed ``G`` that the explorer's choice stands for: ones, one-hot at ``at``, or ``G``."""
    if seed not in SEEDS:
        raise ValueError(f"seed must be one of {SEEDS}, got {seed!r}")
    if seed == "ones":
        return np.ones(shape)
    if seed == "random":
        if G is None or np.shape(G) != tuple(shape):
            raise ValueError(f"the random seed needs G of shape {tuple(shape)}")
        return np.asarray(G, dtype=float)
    i, j = at
    if not (0 <= i < shape[0] and 0 <= j < shape[1]):
        raise ValueError(f"at={at} is outside the output's shape {tuple(shape)}")
    one_hot = np.zeros(shape)
    one_hot[i, j] = 1.0
    return one_hot


def explorer_table(T, B, G=None) -> list[dict]:
    """The explorer's data: one record per entry ``(i, j, k, l)`` of the Jacobian.

    Each record has the four indices, the flattened row ``i*n + j`` and
    column ``k*m + l``, ``d`` = dY_ij/dT_kl = delta_ik B_lj (computed as
    ``matmul_jacobian`` does) and ``g`` = G_ij of the random seed ``G``
    (default: a fixed random 5x3 matrix rounded to two decimals).
    """
    from .jacobian import matmul_jacobian

    T, B, G = _operands(T, B, G)
    J = matmul_jacobian(T.astype(np.float64), B.astype(np.float64), wrt="a")
    n, m = J.shape[1], J.shape[3]
    return [
        {
            "i": i,
            "j": j,
            "k": k,
            "l": el,
            "row": i * n + j,
            "col": k * m + el,
            "d": float(J[i, j, k, el]),
            "g": float(G[i, j]),
        }
        for (i, j, k, el) in np.ndindex(J.shape)
    ]


def explorer_gradient(table: list[dict], seed: str, *, at=(0, 0)) -> np.ndarray:
    """What the chart computes for a seed, in NumPy: sum over (i, j) of G_ij * d."""
    if seed not in SEEDS:
        raise ValueError(f"seed must be one of {SEEDS}, got {seed!r}")
    if not table:
        raise ValueError("table is empty")
    shape = (max(r["k"] for r in table) + 1, max(r["l"] for r in table) + 1)
    out = np.zeros(shape)
    for r in table:
        if seed == "ones":
            w = 1.0
        elif seed == "one-hot":
            w = float((r["i"], r["j"]) == tuple(at))
        else:
            w = r["g"]
        out[r["k"], r["l"]] += w * r["d"]
    return out


def explorer_scale(table: list[dict]) -> float:
    """The explorer's one colour scale: the largest absolute value that any
    of its cells can show, over every seed (ones, one-hot at every (i, j),
    the random ``G``): a weight ``G_ij``, a weighted entry ``G_ij d`` or an
    entry of the gradient. 1 if they are all zero."""
    if not table:
        raise ValueError("table is empty")
    weights = [1.0, *(abs(r["g"]) for r in table)]  # ones and one-hot: 1
    weighted = max(abs(r["d"]) * max(1.0, abs(r["g"])) for r in table)
    shape = {(r["i"], r["j"]) for r in table}
    grads = [explorer_gradient(table, "ones"), explorer_gradient(table, "random")]
    grads += [explorer_gradient(table, "one-hot", at=at) for at in shape]
    return max(max(weights), weighted, *(float(np.abs(g).max()) for g in grads)) or 1.0


def jacobian_explorer(T, B, G=None, *, lang="en", words=None):
    """The explorer as an Altair chart (Vega-Lite 5), in English or Chinese.

    Inputs (Vega-Lite parameters bound to HTML inputs, so keyboard-operable):
    the seed (radio buttons), the one-hot position (two sliders) and the
    entry shown (four sliders, which pointing at a cell also sets).
    """
    import altair as alt

    if lang not in ("en", "zh_CN"):
        raise ValueError(f"lang must be 'en' or 'zh_CN', got {lang!r}")
    T, B, G = _operands(T, B, G)
    w = {**(EXPLORER_WORDS_ZH if lang == "zh_CN" else EXPLORER_WORDS), **(words or {})}
    table = explorer_table(T, B, G)
    (p, q), (r, s) = (T.shape[0], B.shape[1]), T.shape
    top = explorer_scale(table)
    cell = 14

    seed = alt.param(
        name="seed",
        value="ones",
        bind=alt.binding_radio(
            options=list(SEEDS), labels=[w[x] for x in SEEDS], name=w["seed G"] + " "
        ),
    )
    hot_i = alt.param(
        name="hot_i",
        value=0,
        bind=alt.binding_range(min=0, max=p - 1, step=1, name=w["one-hot i"] + " "),
    )
    hot_j = alt.param(
        name="hot_j",
        value=0,
        bind=alt.binding_range(min=0, max=q - 1, step=1, name=w["one-hot j"] + " "),
    )
    entry = alt.selection_point(
        name="entry",
        fields=["l", "k", "j", "i"],  # Vega adds their sliders in reverse: i, j, k, l
        on="pointerover",
        clear=False,
        value=[{"i": 0, "j": 0, "k": 0, "l": 0}],
        bind={
            name: alt.binding_range(min=0, max=size - 1, step=1, name=w[f"entry {name}"] + " ")
            for name, size in (("i", p), ("j", q), ("k", r), ("l", s))
        },
    )
    weight = (
        "seed === 'ones' ? 1 : seed === 'one-hot' ? "
        "((datum.i === hot_i && datum.j === hot_j) ? 1 : 0) : datum.g"
    )
    base = (
        alt.Chart(alt.Data(values=table))
        .transform_calculate(w=weight)
        .transform_calculate(wd="datum.w * datum.d")
    )
    # One colour scale for the weights, the weighted Jacobian and the
    # gradient (explorer_scale), with one legend: the live chart and its
    # static PNG show the same legend, and equal colours are equal values.
    scale = alt.Scale(scheme="redblue", reverse=True, domain=[-top, top])
    # Vega-Lite merges the legends of a shared scale: all three give the same.
    # Above the charts (on the right it would widen the chart on a phone),
    # labelled at the integers inside the scale.
    ticks = list(range(-int(top), int(top) + 1))
    legend = alt.Legend(
        title=w["value (one colour scale)"],
        orient="top",
        direction="horizontal",
        gradientLength=cell * r * s,
        values=ticks,
        titleFontSize=11,
        labelFontSize=10,
        titleLimit=cell * r * s + 40,
    )
    colour = alt.Color("wd:Q", scale=scale, legend=legend)
    rows = alt.Y(
        "row:O",
        title=w["output entry (i, j)"],
        axis=alt.Axis(
            labelFontSize=9,
            labelExpr=f"'(' + floor(datum.value / {q}) + ', ' + datum.value % {q} + ')'",
        ),
    )
    strip = (
        base.transform_filter("datum.k === 0 && datum.l === 0")
        .mark_rect(stroke="#666", strokeWidth=0.5)
        .encode(
            y=rows,
            color=alt.Color("w:Q", scale=scale, legend=legend),
            tooltip=[
                alt.Tooltip("i:O"),
                alt.Tooltip("j:O"),
                alt.Tooltip("w:Q", title="G_ij", format=".2f"),
            ],
        )
        .properties(
            name="weights", width=cell, height=cell * p * q, title=alt.Title("G", fontSize=12)
        )
    )
    matrix = (
        base.mark_rect()
        .encode(
            x=alt.X(
                "col:O",
                title=w["input entry (k, l)"],
                axis=alt.Axis(
                    labelFontSize=9,
                    labelAngle=-90,
                    labelExpr=f"'(' + floor(datum.value / {s}) + ', ' + datum.value % {s} + ')'",
                ),
            ),
            y=alt.Y("row:O", axis=None),
            color=colour,
            stroke=alt.condition(entry, alt.value("black"), alt.value(None), empty=False),
            strokeWidth=alt.condition(entry, alt.value(2.5), alt.value(0), empty=False),
            tooltip=[
                alt.Tooltip("i:O"),
                alt.Tooltip("j:O"),
                alt.Tooltip("k:O"),
                alt.Tooltip("l:O"),
                alt.Tooltip("d:Q", title="∂Y_ij/∂T_kl", format=".4f"),
                alt.Tooltip("w:Q", title="G_ij", format=".2f"),
            ],
        )
        .add_params(entry)
        .properties(
            name="jacobian",
            width=cell * r * s,
            height=cell * p * q,
            title=alt.Title(w["G_ij × ∂Y_ij/∂T_kl"], fontSize=12),
        )
    )
    seed_text = (
        f"'{w['seed G: ']}' + (seed === 'ones' ? '{w['ones']}' : seed === 'one-hot' ? "
        f"'{w['one-hot']} (' + hot_i + ', ' + hot_j + ')' : '{w['random']}')"
    )
    readout = (
        base.transform_filter(entry)
        .transform_calculate(
            text=f"{seed_text} + '\\n(i, j, k, l) = ('"
            " + datum.i + ', ' + datum.j + ', ' + datum.k + ', ' + datum.l + ')'"
            " + '\\n∂Y_ij/∂T_kl = ' + format(datum.d, '.4f')"
            " + ',  G_ij = ' + format(datum.w, '.2f')"
            f" + ',  {w['product']} = ' + format(datum.wd, '.4f')"
        )
        .mark_text(align="left", baseline="top", fontSize=12, lineBreak="\n")
        .encode(text="text:N", x=alt.value(0), y=alt.value(0))
        .properties(name="readout", width=cell * (r * s + 1), height=46)
    )
    summed = base.transform_aggregate(grad="sum(wd)", groupby=["k", "l"])
    grad_rect = summed.mark_rect(stroke="#666", strokeWidth=0.5).encode(
        x=alt.X("l:O", title=w["column l"], axis=alt.Axis(labelAngle=0)),
        y=alt.Y("k:O", title=w["row k"]),
        color=alt.Color("grad:Q", scale=scale, legend=legend),
    )
    grad_text = (
        summed.mark_text(fontSize=12)
        .encode(
            x="l:O",
            y="k:O",
            text=alt.Text("grad:Q", format=".4f"),
            # White on the darkest cells, black elsewhere (contrast).
            color=alt.condition(
                f"abs(datum.grad) > {0.7 * top}", alt.value("white"), alt.value("black")
            ),
        )
        .properties(name="gradient")
    )
    gradient = (grad_rect + grad_text).properties(
        width=64 * s,
        height=22 * r,
        title=alt.Title(w["gradient: the columns summed over i, j"], fontSize=12),
    )
    chart = (
        alt.vconcat(
            alt.hconcat(strip, matrix, spacing=4).resolve_scale(color="shared"),
            readout,
            gradient,
            spacing=10,
        )
        .add_params(seed, hot_i, hot_j)
        .properties(
            # Two lines (after the colon), to fit a phone's column.
            title=alt.Title(
                re.split(r"(?<=[:：])\s*", w["title"], maxsplit=1), fontSize=13, anchor="start"
            ),
            description=w["description"],
            # _ext/vega_static/matgrad-vega.js puts these inputs first.
            usermeta={"matgrad": {"inputs_first": ["seed", "hot_i", "hot_j"]}},
        )
        .resolve_scale(color="shared")
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=10, titleFontSize=11)
    )
    return chart


def static_png(chart, scale: float = 2.0) -> bytes:
    """The chart as a PNG, drawn by vl-convert (no browser), at ``scale``."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_dict(), vl_version="5.20", scale=scale)


def explorer_bundle(T, B, G=None, *, words=None) -> tuple[dict, dict]:
    """``(data, metadata)`` of the explorer's notebook output: Vega-Lite,
    PNG and text in English; the Chinese twin in ``metadata["matgrad"]``."""
    from .plotting import cjk_font

    out = {}
    for lang in ("en", "zh_CN"):
        chart = jacobian_explorer(T, B, G, lang=lang, words=words if lang == "zh_CN" else None)
        out[lang] = {
            VEGALITE_MIME: chart.to_dict(),
            "image/png": base64.b64encode(static_png(chart)).decode("ascii"),
        }
    data = {**out["en"], "text/plain": "<the Jacobian explorer (Vega-Lite)>"}
    twin = (
        {"zh_CN": out["zh_CN"]}
        if cjk_font()
        else {
            "zh_CN": None,
            "error": "no CJK font was found, so the Chinese explorer's static image was not drawn",
        }
    )
    return data, {"matgrad": twin}


def show_explorer(T, B, G=None, *, words=None) -> None:
    """Display the explorer (see the module's docstring)."""
    from IPython.display import display

    data, metadata = explorer_bundle(T, B, G, words=words)
    display(data, metadata=metadata, raw=True)

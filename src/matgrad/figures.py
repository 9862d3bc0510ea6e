"""The figures that carry each page's idea, drawn from the book's computed data.

Each figure has a *data* function (the numbers it draws, tested in
tests/test_figures.py) and a ``plot_*`` function that draws them and returns
the figure. A page shows it with :func:`matgrad.plotting.show`, which draws
the Chinese twin from the same call with ``lang="zh_CN"``: the words below
are in :data:`FIGURE_WORDS_ZH`, and a page that gives a figure its own words
(a title) passes their Chinese to ``show(words)``. Math in these figures is
written with Unicode (``Bᵀ``, ``Σ``, ``∂``) rather than ``$...$``, so that a
Chinese label and a formula can share a line (matplotlib draws ``$...$`` in
its math fonts, which have no Chinese).

Every figure is at most :data:`PHONE_WIDTH_IN` inches wide with no text
smaller than :data:`MIN_TEXT_PX` pixels once the figure is scaled to a
phone's column (:func:`smallest_text_px`, checked by the tests).

| page | data | figure |
|---|---|---|
| index | :func:`puzzle_data` | :func:`plot_puzzle` |
| chapter 01/02 | :func:`jacobian_block_grid` | :func:`plot_jacobian_blocks` |
| chapter 04 | :func:`vjp_slices` | :func:`plot_vjp_slices` |
| chapter 04/06 | :func:`backward_ops` | :func:`plot_backward_graph` |
| chapter 04b | :func:`returned_gradient_data` | :func:`plot_returned_gradients` |
| chapter 05b | :func:`jacobian_costs_data` | :func:`plot_jacobian_costs` |
| chapter 06 | :func:`matmul_grad_branches` | :func:`plot_matmul_branches` |
| chapter 07 (complex) | :func:`complex_matmul_grad_data` | :func:`plot_complex_matmul_grad` |
| chapter 07b | :func:`broadcast_sum_data` | :func:`plot_broadcast_sum` |
| registered gradients | :func:`bias_add_data` | :func:`plot_bias_add` |
| replacing rules | :func:`rules_that_ran` | :func:`plot_rules_that_ran` |
| Wirtinger | :func:`complex_gradient_data` | :func:`plot_complex_gradient` |
| reverse-mode costs | :func:`live_activation_data` | :func:`plot_live_activations` |
| HVP costs | :func:`hvp_costs_data` | :func:`plot_hvp_costs` |
| second derivatives | :func:`hessian_blocks` | :func:`plot_hessian_structure` |
| einsum, Cholesky | :func:`cholesky_mask` | :func:`plot_cholesky_pattern` |
| Hessian costs | :func:`hessian_costs_data` | :func:`plot_hessian_costs` |
| frameworks | :func:`descent_path_data` | :func:`plot_descent_paths` |
| per-example gradients | :func:`per_example_upstream_data` | :func:`plot_per_example_upstream` |
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array, check_callable, check_ndim
from .plotting import _words

#: The widest figure, in inches: scaled to a phone's column it keeps its text legible.
PHONE_WIDTH_IN = 4.8
#: A phone's text column in CSS pixels (a 390-pixel screen less the page's margins).
PHONE_COLUMN_PX = 358
#: The smallest text, in CSS pixels, once a figure is scaled to ``PHONE_COLUMN_PX``.
MIN_TEXT_PX = 8.0
#: The title of a weighted slice in ``plot_vjp_slices``: mathtext, in both languages.
SLICE_TITLE = r"$G_{ij} \times \partial Y_{ij} / \partial T$"
# The note under chapter 01's block grid: mathtext, so that both editions
# typeset it (a format string: {{ij}} is the subscript ij).
BLOCK_NOTE = (
    "block $(i, j) = \\partial Y_{{ij}}/\\partial T$:\n"
    "zero except row $i$, which is column $j$ of $B$"
)
#: The Chinese of every word these figures choose (the twin's words).
FIGURE_WORDS_ZH = {
    "T (5×3)": "T（5×3）",
    "B (3×3)": "B（3×3）",
    "Y = TB": "Y = TB",
    "G = ones (upstream gradient)": "G = 全 1（上游梯度）",
    "Bᵀ": "Bᵀ",
    "tape.gradient(Y, T) = G Bᵀ": "tape.gradient(Y, T) = G Bᵀ",
    "forward": "前向",
    "backward": "反向",
    "B's row sums": "B 的行和",
    "row {} of B": "B 的第 {} 行",
    BLOCK_NOTE: (
        # no $math$ with CJK (CHAIN_ORDER_WORDS_ZH): the derivative in words
        "块 (i, j) 是 Y[i, j] 对 T 的导数：\n除第 i 行外全为零，第 i 行是 B 的第 j 列"
    ),
    "j (column of Y)": "j（Y 的列）",
    "i (row of Y)": "i（Y 的行）",
    "seed G": "种子 G",
    "Σ over i, j": "对 i、j 求和",
    "one colour scale for every panel": "所有小图共用一个色标",
    "ones": "全 1",
    "one-hot at (0, 0)": "(0, 0) 处的独热",
    "random G": "随机 G",
    "summed over i, j (the axes of Y)": "对 i、j（Y 的轴）求和",
    "gradient (shape of T)": "梯度（T 的形状）",
    "traced by tf.function": "tf.function 追踪出的计算图",
    "seed": "种子",
    "input": "输入",
    "forward op": "前向运算",
    "gradient op": "梯度运算",
    "added by the tape": "梯度带添加的运算",
    "not run (pruned)": "未运行（被剪除）",
    "added by the tape, not run": "梯度带添加、未运行",
    "transpose_a=True": "transpose_a=True",
    "transpose_b=True": "transpose_b=True",
    "neither": "都不转置",
    "both": "都转置",
    "transpose_a": "transpose_a",
    "transpose_b": "transpose_b",
    "G enters on the left": "G 为左因子",
    "G enters on the right": "G 为右因子",
    "transposed": "转置",
    "batch {}": "批次 {}",
    "forward: {} is used by every batch": "前向：{} 被每个批次使用",
    "backward: one gradient per batch": "反向：每个批次一个梯度",
    "Σ over the broadcast axis {}": "对广播轴 {} 求和",
    "gradient of {} (its own shape {})": "{} 的梯度（形状仍为 {}）",
    "forward: b is added to every row": "前向：b 加到每一行",
    "backward: G is summed over the rows": "反向：G 的各行相加",
    "broadcast": "广播",
    "sum over rows": "各行相加",
    "G (upstream gradient)": "G（上游梯度）",
    "x = Re z": "x = Re z",
    "y = Im z": "y = Im z",
    "∂L/∂x + i ∂L/∂y (TensorFlow)": "∂L/∂x + i ∂L/∂y（TensorFlow）",
    "its conjugate (JAX's grad)": "它的共轭（JAX 的 grad）",
    "level sets of L": "L 的等值线",
    "step": "步",
    "layer": "层",
    "activations alive": "存活的激活值个数",
    "reverse mode: tf.GradientTape": "反向模式：tf.GradientTape",
    "forward mode: tf.autodiff.ForwardAccumulator": "前向模式：tf.autodiff.ForwardAccumulator",
    "forward pass": "前向传播",
    "backward pass": "反向传播",
    "entry of W (row-major)": "W 的元素（按行优先编号）",
    "entry of ∇L (row-major)": "∇L 的元素（按行优先编号）",
    "second derivative": "二阶导数",
    "flattened Hessian": "展平的黑塞矩阵",
    "block (i, k) = (XᵀX)[i, k] · I": "第 (i, k) 块 = (XᵀX)[i, k] · I",
    "Φ: lower triangle,\nhalf the diagonal": "Φ：下三角，\n对角线减半",
    "raw derivative ÷\nregistered gradient": "原始运算的导数 ÷\n注册梯度",
    "target w": "目标 w",
    "where the op is": "运算所在的位置",
    "override map": "覆盖映射",
    "tf.custom_gradient": "tf.custom_gradient",
    "registered rule (G)": "注册规则（G）",
    "replacement rule (3G)": "替换后的规则（3G）",
    "tf.gradients in a tf.function": "tf.function 中的 tf.gradients",
    "tape around a tf.function": "梯度带包住 tf.function",
    "tape inside, op in tf.cond": "内部梯度带，运算在 tf.cond 中",
    "tape inside, op in tf.while_loop": "内部梯度带，运算在 tf.while_loop 中",
    "tape inside, nested tf.function": "内部梯度带，嵌套的 tf.function",
    "tape inside, op made directly": "内部梯度带，直接创建的运算",
    "tape, eager": "梯度带，即时执行",
    "the first {} steps": "前 {} 步",
    "distance to w": "到 w 的距离",
}


# ---- shared drawing helpers --------------------------------------------------


def smallest_text_px(fig, column_px: float = PHONE_COLUMN_PX) -> float:
    """The smallest text of ``fig``, in CSS pixels, on a phone whose text
    column is ``column_px`` wide.

    The page shows the figure (saved with ``bbox_inches="tight"``, at the
    figure's dpi) at its natural size, or scaled down to the column when it
    is wider: a text of ``s`` points is ``s / 72 * dpi`` image pixels high,
    times that scale.
    """
    from matplotlib.text import Text

    fig.canvas.draw()
    width_in = fig.get_tightbbox(fig.canvas.get_renderer()).width
    natural_px = width_in * fig.dpi  # an image narrower than the column is not enlarged
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.figure is fig
    ]
    if not sizes:
        raise ValueError("the figure has no text")
    return min(sizes) / 72 * fig.dpi * min(column_px, natural_px) / natural_px


def _figure(figsize):
    import matplotlib.pyplot as plt

    if figsize[0] > PHONE_WIDTH_IN:
        raise ValueError(f"figsize width must be at most {PHONE_WIDTH_IN} in, got {figsize[0]}")
    return plt.figure(figsize=figsize, layout="constrained")


def _redraw(fig, function, args, kwargs):
    """Let :func:`matgrad.plotting.show` draw the figure again in Chinese."""
    fig.matgrad_redraw = lambda lang, words: function(
        *args, **{**kwargs, "lang": lang, "words": words}
    )
    return fig


def _text(lang, words):
    return _words(lang, {**FIGURE_WORDS_ZH, **(words or {})})


def _heat(ax, M, *, vmax=None, numbers=None, fontsize=8.5, cmap="RdBu_r", aspect="auto"):
    """A matrix as a heat map (zero white), with its entries written in it
    (``numbers``: a format such as ``"{:.2f}"``, or None)."""
    M = np.asarray(M, dtype=float)
    vmax = float(np.abs(M).max()) if vmax is None else vmax
    vmax = vmax or 1.0
    ax.imshow(M, cmap=cmap, vmin=-vmax, vmax=vmax, interpolation="nearest", aspect=aspect)
    if numbers:
        for (r, c), v in np.ndenumerate(M):
            dark = abs(v) > 0.6 * vmax
            ax.text(
                c,
                r,
                numbers.format(v).replace("-", "−"),
                ha="center",
                va="center",
                fontsize=fontsize,
                color="white" if dark else "black",
            )
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color("0.5")


# ---- index: the puzzle in one picture ----------------------------------------


def _given_or_computed(given, computed, name, owner):
    """``computed``, or ``given`` (a framework's float32 result, called
    ``name``) once it has ``owner``'s shape and agrees with ``computed``."""
    if given is None:
        return computed
    given = as_array(given, name, allow_complex=False)
    if given.shape != computed.shape:
        raise ValueError(f"{name} must have {owner}'s shape {computed.shape}, got {given.shape}")
    np.testing.assert_allclose(given, computed, rtol=1e-5, atol=1e-6)
    return given


def puzzle_data(T, B, grad=None) -> dict:
    """The numbers of the puzzle's picture: ``T``, ``B``, ``Y = T @ B``, the
    seed ``G`` of ones, ``G @ B.T`` and ``B``'s row sums.

    ``grad`` is what ``tape.gradient(Y, T)`` returned on the page; when given,
    it must equal ``G @ B.T`` (to float32 rounding) and it is what is drawn.
    """
    T, B = as_array(T, "T", allow_complex=False), as_array(B, "B", allow_complex=False)
    check_ndim(T, "T", 2)
    check_ndim(B, "B", 2)
    if T.shape[1] != B.shape[0]:
        raise ValueError(f"T @ B needs T's columns = B's rows, got {T.shape} and {B.shape}")
    Y = T @ B
    G = np.ones_like(Y)
    vjp = G @ B.T
    grad = _given_or_computed(grad, vjp, "grad", "T")
    return {"T": T, "B": B, "Y": Y, "G": G, "grad": grad, "row_sums": B.sum(axis=1)}


def plot_puzzle(T, B, grad=None, *, figsize=(4.8, 4.6), lang="en", words=None):
    """The puzzle in one picture: ``Y = TB`` above; below, the seed ``G`` of
    ones times ``Bᵀ`` gives ``tape.gradient(Y, T)``, whose five identical rows
    are ``B``'s row sums (marked beside ``Bᵀ`` and on every row)."""
    text = _text(lang, words)
    d = puzzle_data(T, B, grad)
    fig = _figure(figsize)
    grid = fig.add_gridspec(2, 3, width_ratios=[3, 3, 3], height_ratios=[5, 5])
    panels = [
        (0, 0, d["T"], text("T (5×3)")),
        (0, 1, d["B"], text("B (3×3)")),
        (0, 2, d["Y"], text("Y = TB")),
        (1, 0, d["G"], text("G = ones (upstream gradient)")),
        (1, 1, d["B"].T, text("Bᵀ")),
        (1, 2, d["grad"], "G Bᵀ"),
    ]
    vmax = max(float(np.abs(d[k]).max()) for k in ("T", "B", "Y", "grad"))
    axes = {}
    for r, c, M, title in panels:
        ax = fig.add_subplot(grid[r, c])
        _heat(ax, M, vmax=vmax, numbers="{:.2f}", fontsize=8.5)
        ax.set_title(title, fontsize=10)
        axes[r, c] = ax
    axes[0, 0].set_ylabel(text("forward"), fontsize=10)
    axes[1, 0].set_ylabel(text("backward"), fontsize=10)
    # Bᵀ's columns are B's rows: their sums are what every row of G Bᵀ holds.
    axes[1, 1].set_xlabel(
        text("B's row sums")
        + "\n"
        + "  ".join(f"{v:.2f}".replace("-", "−") for v in d["row_sums"]),
        fontsize=9,
    )
    axes[1, 2].set_xlabel(text("tape.gradient(Y, T) = G Bᵀ"), fontsize=9)
    return _redraw(fig, plot_puzzle, (T, B, grad), {"figsize": figsize})


# ---- chapters 01/02: the rank-4 Jacobian as a grid of blocks -----------------


def jacobian_block_grid(J) -> np.ndarray:
    """A rank-4 Jacobian ``J[i, j, k, l]`` laid out as a grid of blocks: block
    ``(i, j)`` (of the output's shape) is the matrix ``J[i, j]`` (of the
    input's shape). Returns the array of shape ``(I*K, J*L)`` with entry
    ``[i*K + k, j*L + l] = J[i, j, k, l]``."""
    J = as_array(J, "J")
    check_ndim(J, "J", 4)
    I_, J_, K, L = J.shape
    return J.transpose(0, 2, 1, 3).reshape(I_ * K, J_ * L)


def plot_jacobian_blocks(J, *, figsize=(4.2, 5.6), lang="en", words=None):
    """The rank-4 Jacobian ``∂Y/∂T`` of ``Y = TB`` as a 5×3 grid of 5×3 blocks.

    Block ``(i, j)`` is ``∂Y_ij/∂T``: zero except its row ``i``, which holds
    column ``j`` of ``B``, so the non-zero rows step down the grid like the
    ones of the identity in ``I ⊗ Bᵀ``.
    """
    text = _text(lang, words)
    J = as_array(J, "J", allow_complex=False)
    M = jacobian_block_grid(J)
    I_, J_, K, L = J.shape
    fig = _figure(figsize)
    ax = fig.add_subplot()
    vmax = float(np.abs(M).max()) or 1.0
    im = ax.imshow(M, cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest", aspect="auto")
    for r in range(1, I_):
        ax.axhline(r * K - 0.5, color="0.2", lw=1.4)
    for c in range(1, J_):
        ax.axvline(c * L - 0.5, color="0.2", lw=1.4)
    for r in range(I_ * K):
        ax.axhline(r - 0.5, color="0.85", lw=0.3, zorder=0)
    ax.set_yticks([i * K + (K - 1) / 2 for i in range(I_)], [f"i={i}" for i in range(I_)])
    ax.set_xticks([j * L + (L - 1) / 2 for j in range(J_)], [f"j={j}" for j in range(J_)])
    ax.xaxis.tick_top()
    ax.tick_params(length=0, labelsize=10)
    ax.set_ylabel(text("i (row of Y)"), fontsize=10)
    # k and l, the axes of T, labelled on one block: the bottom-left one.
    ax_l = ax.secondary_xaxis("bottom")
    ax_l.set_xticks(range(L), ["l=0", *map(str, range(1, L))])
    ax_l.tick_params(length=0, labelsize=9)
    ax_l.set_xlabel(text(BLOCK_NOTE), fontsize=9)
    ax_k = ax.secondary_yaxis("right")
    ax_k.set_yticks([(I_ - 1) * K + k for k in range(K)], ["k=0", *map(str, range(1, K))])
    ax_k.tick_params(length=0, labelsize=9)
    fig.colorbar(im, ax=ax, shrink=0.6, pad=0.14, label=r"$\partial Y_{ij}/\partial T_{kl}$")
    return _redraw(fig, plot_jacobian_blocks, (J,), {"figsize": figsize})


# ---- chapter 04: the VJP as a weighted sum of slices --------------------------


def vjp_slices(J, G) -> tuple[np.ndarray, np.ndarray]:
    """``(weighted, vjp)``: each slice ``J[i, j]`` times ``G[i, j]``, and their
    sum over ``(i, j)``, the vector-Jacobian product ``G · J`` (shape of the
    input)."""
    J, G = as_array(J, "J"), as_array(G, "G")
    check_ndim(J, "J", 4)
    if G.shape != J.shape[:2]:
        raise ValueError(f"G must have the output's shape {J.shape[:2]}, got {G.shape}")
    weighted = G[:, :, None, None] * J
    return weighted, weighted.sum(axis=(0, 1))


def default_seeds(shape, rng_seed=0) -> dict:
    """The three seeds of chapter 04: ones, one-hot at (0, 0), a random G
    (standard normal, ``rng_seed``), keyed by their English names."""
    one_hot = np.zeros(shape)
    one_hot[0, 0] = 1.0
    return {
        "ones": np.ones(shape),
        "one-hot at (0, 0)": one_hot,
        "random G": np.random.default_rng(rng_seed).standard_normal(shape),
    }


def plot_vjp_slices(J, seeds=None, *, figsize=(4.8, 7.0), lang="en", words=None):
    """One row per seed: the seed ``G`` (the weights), the block grid of
    ``G_ij × ∂Y_ij/∂T``, and its sum over ``i, j`` (the axes of ``Y``), which is
    the gradient, shaped like ``T``. ``seeds`` maps a name to ``G``
    (default: :func:`default_seeds`); the names need Chinese in ``words``
    unless they are the defaults'.

    Every panel has the same width and the same symmetric colour scale
    (:func:`vjp_slices_scale`), shown by one colour bar: equal colours are
    equal values, in every row and column."""
    text = _text(lang, words)
    J = as_array(J, "J", allow_complex=False)
    check_ndim(J, "J", 4)
    seeds = default_seeds(J.shape[:2]) if seeds is None else dict(seeds)
    top = vjp_slices_scale(J, seeds)
    fig = _figure(figsize)
    grid = fig.add_gridspec(len(seeds), 3, width_ratios=[1, 1, 1])
    axes = []
    for r, (name, G) in enumerate(seeds.items()):
        weighted, vjp = vjp_slices(J, G)
        ax_g = fig.add_subplot(grid[r, 0])
        _heat(ax_g, G, vmax=top)
        ax_g.set_ylabel(text(name), fontsize=10)
        ax_w = fig.add_subplot(grid[r, 1])
        M = jacobian_block_grid(weighted)
        _heat(ax_w, M, vmax=top)
        I_, J_, K, L = J.shape
        for i in range(1, I_):
            ax_w.axhline(i * K - 0.5, color="0.4", lw=0.6)
        for j in range(1, J_):
            ax_w.axvline(j * L - 0.5, color="0.4", lw=0.6)
        # Tile (i, j) is G_ij ∂Y_ij/∂T: label the tiles, not the entries.
        ax_w.set_yticks([i * K + (K - 1) / 2 for i in range(I_)], range(I_), fontsize=8)
        ax_w.set_xticks([j * L + (L - 1) / 2 for j in range(J_)], range(J_), fontsize=8)
        ax_w.tick_params(length=0, pad=1.5)
        ax_w.set_ylabel("$i$", fontsize=9, labelpad=7, rotation=0, va="center")
        if r == len(seeds) - 1:
            ax_w.set_xlabel("$j$", fontsize=9, labelpad=1)
        ax_v = fig.add_subplot(grid[r, 2])
        _heat(ax_v, vjp, vmax=top, numbers="{:.2f}", fontsize=8.5)
        if r == 0:
            ax_g.set_title(text("seed G"), fontsize=10)
            ax_w.set_title(SLICE_TITLE, fontsize=10)  # math: no words
            ax_v.set_title(text("Σ over i, j"), fontsize=10)
        axes += [ax_g, ax_w, ax_v]
    bar = fig.colorbar(
        axes[0].images[0], ax=axes, location="bottom", shrink=0.7, aspect=30, pad=0.02
    )
    bar.ax.tick_params(labelsize=8.5)
    bar.set_label(text("one colour scale for every panel"), fontsize=9)
    fig.supxlabel(
        text("summed over i, j (the axes of Y)") + " → " + text("gradient (shape of T)"),
        fontsize=9,
    )
    return _redraw(fig, plot_vjp_slices, (J,), {"seeds": seeds, "figsize": figsize})


def vjp_slices_scale(J, seeds) -> float:
    """The one colour scale of :func:`plot_vjp_slices`: the largest absolute
    value of every panel (each seed ``G``, its weighted slices and their sum),
    or 1 if they are all zero."""
    J = as_array(J, "J", allow_complex=False)
    if not isinstance(seeds, dict) or not seeds:
        raise TypeError("seeds must be a non-empty dict from a name to G")
    top = 0.0
    for G in seeds.values():
        weighted, vjp = vjp_slices(J, G)
        top = max(top, float(np.abs(G).max()), float(np.abs(weighted).max()))
        top = max(top, float(np.abs(vjp).max()))
    return top or 1.0


# ---- chapters 04/06: the backward pass that TensorFlow ran --------------------


def backward_ops(
    a_shape=(5, 3),
    b_shape=(3, 3),
    *,
    transpose_a=False,
    transpose_b=False,
    seed="ones",
    sources=("a", "b"),
    names=("A", "B"),
    asked=None,
) -> list[dict]:
    """The ops of ``tape.gradient(tf.matmul(a, b, ...), sources)`` as TensorFlow
    traced them in a ``tf.function`` (read from its graph, not typed). The
    tape watches the ``sources`` only (``"a"``, ``"b"`` or both); ``asked``
    (default: the ``sources``) are those whose gradients the function asks
    for and returns: with both watched and ``a`` alone asked, the graph holds
    both gradient ``MatMul`` ops, and ``B``'s does not run.

    ``seed="ones"`` lets the tape seed its ones; ``seed="G"`` passes an input
    ``G`` as ``output_gradients``. ``names`` are the letters of ``a`` and
    ``b`` (the puzzle: ``("T", "B")``). Each op is a dict: ``name``,
    ``type``, ``inputs`` (names of the ops they come from), ``gradient``
    (True for the ops that the tape added, named ``gradient_tape/...``),
    ``output`` (True for what the function returns), ``symbol`` (a letter
    for an input, ``G`` for the seed, ``Y`` for the product, the product it
    computes, such as ``G Bᵀ``, for a gradient ``MatMul``), ``ran`` (True
    when the function's outputs need the op,
    :func:`matgrad.counting.needed_operations`: TensorFlow prunes the others,
    such as the forward ``MatMul``, before the function runs), and for
    ``MatMul`` its ``transpose_a`` and ``transpose_b``, for a ``Const`` its
    ``value``. ``Identity`` ops (the function's outputs) are left out.
    """
    from .counting import needed_operations
    from .tf_matmul import _tf

    if seed not in ("ones", "G"):
        raise ValueError(f"seed must be 'ones' or 'G', got {seed!r}")
    if not sources or set(sources) - {"a", "b"}:
        raise ValueError(f"sources must be a non-empty sequence of 'a' and 'b', got {sources!r}")
    asked = tuple(sources) if asked is None else tuple(asked)
    if not asked or set(asked) - set(sources):
        raise ValueError(f"asked must be a non-empty part of sources {sources!r}, got {asked!r}")
    if len(names) != 2 or "G" in names or "Y" in names or names[0] == names[1]:
        raise ValueError(f"names must be two letters other than G and Y, got {names!r}")
    tf = _tf()
    m = a_shape[1] if transpose_a else a_shape[0]
    n = b_shape[0] if transpose_b else b_shape[1]
    specs = [
        tf.TensorSpec(a_shape, tf.float32, name=names[0]),
        tf.TensorSpec(b_shape, tf.float32, name=names[1]),
    ]
    if seed == "G":
        specs.append(tf.TensorSpec((m, n), tf.float32, name="G"))

    def run(a, b, g=None):
        chosen = [{"a": a, "b": b}[s] for s in sources]
        with tf.GradientTape() as tape:
            tape.watch(chosen)  # only the sources: the tape skips the other branch
            y = tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
        grads = tape.gradient(y, chosen, output_gradients=g)
        return [grad for grad, s in zip(grads, sources, strict=True) if s in asked]

    graph = tf.function(run).get_concrete_function(*specs).graph
    needed = {op.name for op in needed_operations(graph)}
    outputs, ops, symbols = set(), [], {}
    for op in graph.get_operations():
        if op.type == "Identity":
            outputs.update(t.op.name for t in op.inputs)
            continue
        record = {
            "name": op.name,
            "type": op.type,
            "inputs": [t.op.name for t in op.inputs],
            "gradient": op.name.startswith("gradient_tape/"),
            "ran": op.name in needed,
        }
        if op.type == "MatMul":
            record["transpose_a"] = bool(op.get_attr("transpose_a"))
            record["transpose_b"] = bool(op.get_attr("transpose_b"))
        if op.type == "Const":
            record["value"] = tf.make_ndarray(op.get_attr("value"))
        if op.type == "Placeholder":
            symbol = op.name
        elif op.type == "MatMul" and not record["gradient"]:
            symbol = "Y"
        elif op.type == "MatMul":
            symbol = op_formula(record, symbols)
        else:  # what the tape seeds: Const "ones" (static shapes) or Fill
            symbol = "G"
        symbols[op.name] = record["symbol"] = symbol
        ops.append(record)
    for record in ops:
        record["output"] = record["name"] in outputs
    return ops


def op_formula(op, symbols) -> str:
    """``MatMul(x, y, transpose_a, transpose_b)`` as a product, such as ``G Bᵀ``
    (``symbols`` maps op names to letters)."""
    if op["type"] != "MatMul":
        raise ValueError(f"op_formula needs a MatMul op, got {op['type']}")
    x, y = (symbols.get(name, name) for name in op["inputs"])
    return f"{x}{'ᵀ' if op['transpose_a'] else ''} {y}{'ᵀ' if op['transpose_b'] else ''}"


def gradient_products(ops) -> dict:
    """The product each gradient ``MatMul`` of ``ops`` (:func:`backward_ops`)
    computes, keyed by its source: ``{"dA": "G Bᵀ", "dB": "Aᵀ G"}``. The
    gradient of one operand multiplies ``G`` by the *other* operand, so the
    source is the input letter missing from the product."""
    letters = [op["symbol"] for op in ops if op["type"] == "Placeholder" and op["symbol"] != "G"]
    found = {}
    for op in ops:
        if op["type"] == "MatMul" and op["gradient"]:
            used = {factor.rstrip("ᵀ") for factor in op["symbol"].split()}
            (missing,) = [letter for letter in letters if letter not in used]
            found["d" + missing] = op["symbol"]
    return found


def plot_backward_graph(ops, *, figsize=(4.8, 3.4), lang="en", words=None):
    """The ops of :func:`backward_ops` as a graph: inputs and the seed on the
    left, each op in a column after its inputs, the tape's seed and gradient
    ops in red, an op that did not run (``ran`` False: pruned) with a dashed
    outline (red if the tape added it, grey otherwise), and a legend. The
    gradient ops show their ``transpose_a``/``transpose_b`` and the product
    they compute, labelled with the gradient they give (``T̄ = G Bᵀ``, the bar
    meaning "gradient of the loss", as in the book)."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

    text = _text(lang, words)
    if not ops:
        raise ValueError("ops is empty")
    products = {v: k for k, v in gradient_products(ops).items()}
    depth = {}
    for op in ops:  # TensorFlow lists a graph's ops after their inputs
        depth[op["name"]] = 1 + max((depth.get(i, 0) for i in op["inputs"]), default=-1)
    columns: dict[int, list] = {}
    for op in ops:
        columns.setdefault(depth[op["name"]], []).append(op)
    fig = _figure(figsize)
    ax = fig.add_subplot()
    where, used = {}, set()
    width = 1.5
    for col, members in columns.items():
        for row, op in enumerate(members):
            where[op["name"]] = (col * 1.9, -row * 1.25)
    for op in ops:
        x, y = where[op["name"]]
        if op["type"] == "MatMul":
            label = (
                f"MatMul\n{products[op['symbol']][1:]}\u0304 = {op['symbol']}"
                if op["gradient"]
                else f"MatMul\nY = {op['inputs'][0]} {op['inputs'][1]}"
            )
            flags = [f for f in ("transpose_a", "transpose_b") if op.get(f)]
            if flags:
                label += "\n" + ", ".join(text(f"{f}=True") for f in flags)
        elif op["type"] == "Placeholder":
            label = f"{text('input')}\n{op['symbol']}"
        else:
            label = f"{text('seed')} G\n{op['type']} ({op['name']})"
        kind = _graph_kind(op)
        colour, style = _GRAPH_STYLES[kind]
        used.add(kind)
        ax.add_patch(
            FancyBboxPatch(
                (x - width / 2, y - 0.45),
                width,
                0.9,
                boxstyle="round,pad=0.05",
                fc="white",
                ec=colour,
                lw=1.6,
                ls=style,
            )
        )
        ax.text(x, y, label, ha="center", va="center", fontsize=8.5, color=colour)
        for source in op["inputs"]:
            sx, sy = where[source]
            ax.add_patch(
                FancyArrowPatch(
                    (sx + width / 2 + 0.05, sy),
                    (x - width / 2 - 0.05, y),
                    arrowstyle="-|>",
                    mutation_scale=10,
                    color="0.45" if op.get("ran", True) else "0.7",
                    lw=1,
                    ls="-" if op.get("ran", True) else "--",
                    connectionstyle="arc3,rad=0.0",
                )
            )
    xs = [p[0] for p in where.values()]
    ys = [p[1] for p in where.values()]
    ax.set_xlim(min(xs) - width / 2 - 0.2, max(xs) + width / 2 + 0.2)
    ax.set_ylim(min(ys) - 0.7, max(ys) + 0.7)
    ax.set_axis_off()
    ax.set_title(text("traced by tf.function"), fontsize=9, color="0.3")
    handles = [
        Patch(
            fc="white",
            ec=_GRAPH_STYLES[kind][0],
            ls=_GRAPH_STYLES[kind][1],
            lw=1.6,
            label=text(_GRAPH_LEGEND[kind]),
        )
        for kind in _GRAPH_STYLES
        if kind in used
    ]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=len(handles),
        fontsize=8.5,
        frameon=False,
        handlelength=1.6,
        columnspacing=1.0,
    )
    return _redraw(fig, plot_backward_graph, (ops,), {"figsize": figsize})


#: The outline (colour, line style) of each kind of op in plot_backward_graph.
_GRAPH_STYLES = {
    "input": ("#555555", "-"),
    "tape": ("#c0392b", "-"),
    "forward": ("#1f5fa8", "-"),
    "tape, not run": ("#c0392b", "--"),
    "not run": ("0.45", "--"),
}
_GRAPH_LEGEND = {
    "input": "input",
    "tape": "added by the tape",
    "forward": "forward op",
    "tape, not run": "added by the tape, not run",
    "not run": "not run (pruned)",
}


def _graph_kind(op) -> str:
    """An op's kind in :func:`plot_backward_graph`: an input, an op that
    the function's outputs do not need (TensorFlow prunes it, so it never
    runs; red if the tape added it), what the tape added (its seed, the
    gradient ops), or a forward op that runs."""
    if op["type"] == "Placeholder":
        return "input"
    tape = op["gradient"] or op["type"] != "MatMul"
    if not op.get("ran", True):
        return "tape, not run" if tape else "not run"
    return "tape" if tape else "forward"


# ---- chapter 04b: what tape.gradient returns, made dense, and the truth ----------

#: The Chinese of the words of :func:`plot_returned_gradients`: its own and
#: chapter 04b's headings.
RETURNED_WORDS_ZH = {
    "T_tf * 0.0": "T_tf * 0.0",
    "cast to int32\nand back": "转换为 int32\n再转换回来",
    "tf.stop_gradient": "tf.stop_gradient",
    "tf.gather,\nrows 0, 2": "tf.gather，\n第 0、2 行",
    "returned": "返回值",
    "made dense": "转成稠密张量",
    "true gradient": "真实梯度",
    "row not stored": "未存储的行",
    "differs from the true gradient": "与真实梯度不同",
}


def _returned_parts(returned, shape):
    """``(kind, values, indices)`` of what ``tape.gradient`` returned for a
    source of ``shape``: None, a dense array of that shape, or an
    ``IndexedSlices`` (``values``: k rows of the source's width; ``indices``:
    k row indices)."""
    if returned is None:
        return "None", None, None
    if hasattr(returned, "values") and hasattr(returned, "indices"):
        values = as_array(np.asarray(returned.values), "returned.values", allow_complex=False)
        indices = np.asarray(returned.indices)
        if values.ndim != 2 or values.shape[1:] != shape[1:]:
            raise ValueError(
                f"returned.values must hold rows of width {shape[1]}, got shape {values.shape}"
            )
        if indices.dtype.kind not in "iu":
            raise TypeError(f"returned.indices must be integer row indices, got {indices.dtype}")
        if indices.shape != values.shape[:1]:
            raise ValueError(
                f"returned.indices must be {values.shape[0]} row indices, one per row of "
                f"returned.values, got shape {indices.shape}"
            )
        if not ((0 <= indices) & (indices < shape[0])).all():
            raise ValueError(
                f"returned.indices must be rows of the source, in range({shape[0]}), "
                f"got {indices.tolist()}"
            )
        return "tf.IndexedSlices", values, indices
    values = as_array(np.asarray(returned), "returned", allow_complex=False)
    if values.shape != shape:
        raise ValueError(f"returned must have T's shape {shape}, got {values.shape}")
    return "tf.Tensor", values, None


def returned_gradient_data(returned, f, T, *, h=1e-6) -> dict:
    """What ``tape.gradient(Y, T)`` returned for the default seed (ones),
    made dense, beside the true gradient of ``Σ Y``.

    ``returned``: None, a dense array of ``T``'s shape, or a
    ``tf.IndexedSlices`` (any object with ``values``, k rows of ``T``'s width,
    and ``indices``, their k rows of ``T``). ``f``: the target ``Y`` as a
    NumPy function of ``T``, with ``tf.stop_gradient`` as what it is in the
    forward pass, the identity.

    Returns ``kind`` (``"tf.Tensor"``, ``"None"`` or ``"tf.IndexedSlices"``),
    ``values`` and ``indices`` (what was returned; ``indices`` only for an
    ``IndexedSlices``), ``dense`` (zeros for None, as
    ``UnconnectedGradients.ZERO`` gives; an ``IndexedSlices``' rows added at
    their indices, as ``tf.convert_to_tensor`` does), ``true`` (the gradient
    of ``Σ f(T)`` by central differences of step ``h``, in float64) and
    ``differs`` (whether ``dense`` differs from ``true`` beyond float32
    rounding: a cut).
    """
    T = as_array(T, "T", allow_complex=False)
    check_ndim(T, "T", 2)
    check_callable(f, "f")
    if not isinstance(h, (float, int, np.floating, np.integer)) or isinstance(h, bool):
        raise TypeError(f"h must be a real number, got {h!r}")
    if not h > 0:
        raise ValueError(f"h must be positive, got {h!r}")
    kind, values, indices = _returned_parts(returned, T.shape)
    dense = np.zeros(T.shape)
    if kind == "tf.Tensor":
        dense = values.astype(np.float64)
    elif kind == "tf.IndexedSlices":
        np.add.at(dense, indices, values)  # a repeated row is added, not overwritten
    T64 = T.astype(np.float64)

    def loss(t):
        y = as_array(np.asarray(f(t)), "f(T)", allow_complex=False)
        return float(y.sum())

    true = np.empty(T.shape)
    for index in np.ndindex(T.shape):
        step = np.zeros(T.shape)
        step[index] = h
        true[index] = (loss(T64 + step) - loss(T64 - step)) / (2 * h)
    if not np.isfinite(true).all():
        raise ValueError("f must be finite near T: its central differences are not")
    # float32 rounding of the returned gradient, and the differences' own
    # error (about eps |Σ f| / h), stay far below this; a cut does not.
    tol = 1e-5 * max(1.0, float(np.abs(true).max()))
    return {
        "kind": kind,
        "values": values,
        "indices": indices,
        "dense": dense,
        "true": true,
        "differs": bool(np.abs(dense - true).max() > tol),
    }


def _hatch(ax, mask):
    """Hatch the cells of an image drawn on ``ax`` where ``mask`` is true."""
    rows, cols = mask.shape
    ax.pcolor(
        np.arange(cols + 1) - 0.5,
        np.arange(rows + 1) - 0.5,
        np.ma.masked_where(~mask, np.ones(mask.shape)),
        hatch="////",
        facecolor="none",
        edgecolor="0.7",
        linewidth=0,
    )


def _check_headed(name, value, what, *, most, unit):
    """A figure's panels given as a non-empty dict from a heading (a string)
    to ``what``, with at most ``most`` entries (no more fit a phone's width)."""
    if not isinstance(value, dict) or not value:
        raise TypeError(
            f"{name} must be a non-empty dict from a heading to {what}, got {type(value).__name__}"
        )
    if len(value) > most:
        raise ValueError(
            f"{name} must hold at most {most} {unit}, got {len(value)}: no more fit a phone's width"
        )
    for heading in value:
        if not isinstance(heading, str):
            raise TypeError(f"each heading must be a string, got {heading!r}")


def plot_returned_gradients(cases, T, *, figsize=(4.8, 4.4), lang="en", words=None):
    """One column per target of ``cases`` (a dict from a heading, the page's
    words, to ``(returned, f)`` as :func:`returned_gradient_data` takes them;
    at most 4): top, what ``tape.gradient`` returned (a dense array; for
    None, an empty dashed frame; for an ``IndexedSlices``, its rows at their
    indices, the rows it does not store hatched), with its kind written on
    top of the panel; middle, that made dense; bottom, the true gradient.
    One colour scale; a dense form that differs from the true gradient is
    framed in red."""
    from matplotlib.patches import Patch, Rectangle

    text = _text(lang, {**RETURNED_WORDS_ZH, **(words or {})})
    _check_headed("cases", cases, "(returned, f)", most=4, unit="cases")
    data = {}
    for heading, case in cases.items():
        if not isinstance(case, tuple) or len(case) != 2:
            raise TypeError(f"each case must be a pair (returned, f), got {case!r}")
        data[heading] = returned_gradient_data(*case, T)
    for heading, d in data.items():
        if d["indices"] is not None and len(set(d["indices"].tolist())) < len(d["indices"]):
            raise ValueError(
                f"the rows of {heading!r} repeat an index, {d['indices'].tolist()}: "
                f"each stored row is drawn at its index"
            )
    rows, cols = np.shape(T)
    n = len(data)
    step = cols + 1  # a panel and a blank column: one image per row, for speed
    vmax = max(max(float(np.abs(d[k]).max()) for k in ("dense", "true")) for d in data.values())
    vmax = vmax or 1.0
    strips = np.full((3, rows, step * n - 1), np.nan)
    unstored = np.zeros((rows, step * n - 1), dtype=bool)  # an IndexedSlices' missing rows
    for c, d in enumerate(data.values()):
        panel = slice(c * step, c * step + cols)
        if d["kind"] == "tf.Tensor":
            strips[0][:, panel] = d["values"]
        elif d["kind"] == "tf.IndexedSlices":
            strips[0][d["indices"], panel] = d["values"]
            unstored[:, panel] = np.isnan(strips[0][:, panel])
        strips[1][:, panel] = d["dense"]
        strips[2][:, panel] = d["true"]
    fig = _figure(figsize)
    fig.get_layout_engine().set(hspace=0.08)  # a clear gap between the rows
    axes = fig.subplots(3, 1)
    red = "#c0392b"
    for r, (ax, strip) in enumerate(zip(axes, strips, strict=True)):
        image = ax.imshow(
            np.ma.masked_invalid(strip),
            cmap="RdBu_r",
            vmin=-vmax,
            vmax=vmax,
            interpolation="nearest",
            aspect="auto",
        )
        # Cell edges, so that an array of zeros reads as cells, not as a blank;
        # None has no cells.
        drawn = [c for c, d in enumerate(data.values()) if r or d["kind"] != "None"]
        ax.vlines(
            [c * step + k - 0.5 for c in drawn for k in range(1, cols)],
            -0.5,
            rows - 0.5,
            colors="0.8",
            lw=0.5,
        )
        for c in drawn:
            ax.hlines(
                np.arange(1, rows) - 0.5, c * step - 0.5, c * step + cols - 0.5, "0.8", lw=0.5
            )
        for c, d in enumerate(data.values()):
            cut = r == 1 and d["differs"]
            ax.add_patch(
                Rectangle(
                    (c * step - 0.5, -0.5),
                    cols,
                    rows,
                    fill=False,
                    ec=red if cut else "0.5",
                    lw=2.5 if cut else 0.8,
                    ls="--" if r == 0 and d["kind"] == "None" else "-",
                    clip_on=False,
                )
            )
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_ylabel(text(("returned", "made dense", "true gradient")[r]), fontsize=9.5)
    top = axes[0]
    if unstored.any():
        _hatch(top, unstored)
        top.set_xlim(-0.5, unstored.shape[1] - 0.5)
        top.set_ylim(rows - 0.5, -0.5)
    # What was returned sits right on top of its panel of the top row, the
    # heading above it: never below the top row, where it would read as the
    # heading of the panel under it.
    for c, (heading, d) in enumerate(data.items()):
        middle = c * step + (cols - 1) / 2
        top.annotate(
            "→ " + d["kind"],
            (middle, -0.5),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8.5,
            color="0.3",
        )
        top.annotate(
            text(heading),
            (middle, -0.5),
            xytext=(0, 15),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=9,
        )
    bar = fig.colorbar(image, ax=list(axes), location="bottom", shrink=0.6, aspect=30, pad=0.03)
    bar.ax.tick_params(labelsize=8.5)
    bar.set_label(text("one colour scale for every panel"), fontsize=9)
    handles = []
    if unstored.any():
        handles.append(
            Patch(fc="white", ec="0.6", hatch="////", lw=0.6, label=text("row not stored"))
        )
    if any(d["differs"] for d in data.values()):
        handles.append(
            Patch(fill=False, ec=red, lw=2, label=text("differs from the true gradient"))
        )
    if handles:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=len(handles),
            fontsize=8.5,
            frameon=False,
            handlelength=1.6,
        )
    return _redraw(fig, plot_returned_gradients, (cases, T), {"figsize": figsize})


# ---- chapter 06: the four transpose branches ----------------------------------


def matmul_grad_branches(a_shape=(5, 3), b_shape=(3, 3)) -> dict:
    """For each ``(transpose_a, transpose_b)``, the products TensorFlow's
    gradient of ``MatMul`` computes, read from the traced graph with an input
    ``G`` as the seed: ``{(False, False): {"dA": "G Bᵀ", "dB": "Aᵀ G"}, ...}``.
    ``a_shape`` and ``b_shape`` are the stored shapes for the first branch;
    the others transpose them so that every product is defined."""
    out = {}
    for ta in (False, True):
        for tb in (False, True):
            a = a_shape[::-1] if ta else a_shape
            b = b_shape[::-1] if tb else b_shape
            ops = backward_ops(a, b, transpose_a=ta, transpose_b=tb, seed="G")
            out[ta, tb] = gradient_products(ops)
    return out


def _glyph(ax, x, y, name, shape, colour, transposed):
    from matplotlib.patches import Rectangle

    rows, cols = shape
    h, w = rows * 0.16, cols * 0.16
    ax.add_patch(
        Rectangle(
            (x, y - h / 2),
            w,
            h,
            fc=colour,
            ec="0.25",
            lw=1,
            hatch="///" if transposed else None,
            alpha=0.9,
        )
    )
    ax.text(
        x + w / 2,
        y,
        name,
        ha="center",
        va="center",
        fontsize=10,
        fontweight="bold",
        bbox={"fc": "white", "ec": "none", "pad": 0.5, "alpha": 0.8},
    )
    return x + w


def plot_matmul_branches(
    branches,
    *,
    a_shape=(5, 3),
    b_shape=(3, 3),
    figsize=(4.8, 5.6),
    labels=None,
    lang="en",
    words=None,
):
    """The four branches of ``MatMul``'s gradient (:func:`matmul_grad_branches`),
    one panel each: the products for ``dA`` and ``dB`` drawn as matrices in
    proportion to their shapes, ``G`` in red, a transposed operand hatched,
    with the side where ``G`` enters. ``labels`` names the two gradients on
    the figure ({"dA": ..., "dB": ...}; default ``dA`` and ``dB``), for a
    page that writes them otherwise (for example ``Ā`` and ``B̄``)."""
    text = _text(lang, words)
    if set(branches) != {(False, False), (False, True), (True, False), (True, True)}:
        raise ValueError(
            f"branches must have the four (transpose_a, transpose_b) keys, got {sorted(branches)}"
        )
    labels = {"dA": "dA", "dB": "dB", **(labels or {})}
    if set(labels) != {"dA", "dB"} or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError(f"labels must map 'dA' and 'dB' to strings, got {labels!r}")
    fig = _figure(figsize)
    axes = fig.subplots(4, 1)
    m, k = a_shape
    n = b_shape[1]
    for ax, ((ta, tb), products) in zip(axes, sorted(branches.items()), strict=True):
        # The stored shapes in this branch (a transposed operand is stored transposed).
        shapes = {"A": (k, m) if ta else (m, k), "B": (n, k) if tb else (k, n), "G": (m, n)}
        flags = ", ".join(f"{f}=True" for f, on in (("transpose_a", ta), ("transpose_b", tb)) if on)
        name = {
            (False, False): "neither",
            (False, True): "transpose_b",
            (True, False): "transpose_a",
            (True, True): "both",
        }[ta, tb]
        colon = "：" if lang == "zh_CN" else ": "  # full width after Chinese
        ax.set_title(f"{text(name)}{colon}MatMul(A, B{', ' + flags if flags else ''})", fontsize=9)
        for line, key in enumerate(("dA", "dB")):
            y = -line * 1.1
            x = 0.0
            ax.text(x, y, f"{labels[key]} =", ha="left", va="center", fontsize=10)
            x += 0.75
            factors = products[key].split()
            for factor in factors:
                name = factor.rstrip("ᵀ")
                transposed = factor.endswith("ᵀ")
                shape = shapes[name][::-1] if transposed else shapes[name]
                colour = "#e8a0a0" if name == "G" else "#cfd8e6"
                x = _glyph(ax, x, y, factor, shape, colour, transposed) + 0.15
            side = "G enters on the left" if factors[0].startswith("G") else "G enters on the right"
            ax.text(x + 0.1, y, text(side), ha="left", va="center", fontsize=8.5, color="0.3")
        ax.set_xlim(-0.1, 5.2)
        ax.set_ylim(-1.1 - 0.55, 0.55)
        ax.set_aspect("equal")
        ax.set_axis_off()
    return _redraw(
        fig,
        plot_matmul_branches,
        (branches,),
        {"a_shape": a_shape, "b_shape": b_shape, "figsize": figsize, "labels": labels},
    )


# ---- chapter 07: broadcast forward, sum backward --------------------------------


def broadcast_sum_data(x, y, grad, which="y") -> dict:
    """How ``BatchMatMulV2``'s gradient sums over a broadcast batch axis.

    For the input ``which`` (``"x"`` or ``"y"``): ``per_batch`` is its
    gradient batch by batch (shaped like the output's batch), ``axes`` the
    batch axes broadcasting stretched (of size 1, or missing, in the input),
    and ``gradient`` their sum, which equals
    :func:`matgrad.tf_matmul.batch_matmul_grad`'s."""
    from .tf_matmul import batch_matmul_grad

    if which not in ("x", "y"):
        raise ValueError(f"which must be 'x' or 'y', got {which!r}")
    x, y, grad = as_array(x, "x"), as_array(y, "y"), as_array(grad, "grad")
    gx, gy = batch_matmul_grad(x, y, grad)  # checks shapes
    batch = grad.shape[:-2]
    if which == "x":
        per_batch = grad @ np.swapaxes(np.broadcast_to(y, batch + y.shape[-2:]), -1, -2).conj()
        own, final = x.shape, gx
    else:
        per_batch = np.swapaxes(np.broadcast_to(x, batch + x.shape[-2:]), -1, -2).conj() @ grad
        own, final = y.shape, gy
    padded = (1,) * (len(batch) - (len(own) - 2)) + own[:-2]
    axes = tuple(i for i, (s, b) in enumerate(zip(padded, batch, strict=True)) if s == 1 and b != 1)
    summed = per_batch.sum(axis=axes, keepdims=True).reshape(final.shape)
    np.testing.assert_allclose(summed, final, rtol=1e-10, atol=1e-12)
    return {"batch": batch, "axes": axes, "per_batch": per_batch, "gradient": final, "shape": own}


def plot_broadcast_sum(x, y, grad, which="y", *, figsize=(4.8, 5.3), lang="en", words=None):
    """Broadcast forward, sum backward, for a batch of rank 2 (b, j): the
    output's batch as a grid of per-batch gradients of ``which``; arrows sum
    them along the broadcast axis into the input's own gradient (last row or
    column). Every panel has the same symmetric colour scale (the largest
    absolute value of the per-batch gradients and their sums), shown by one
    colour bar: equal colours are equal values."""
    text = _text(lang, words)
    d = broadcast_sum_data(x, y, grad, which)
    if len(d["batch"]) != 2 or len(d["axes"]) != 1:
        raise ValueError(
            f"plot_broadcast_sum draws a batch of rank 2 with one broadcast axis, got batch "
            f"{d['batch']} and broadcast axes {d['axes']}"
        )
    (axis,) = d["axes"]
    b0, b1 = d["batch"]
    per = d["per_batch"]
    final = d["gradient"].reshape((-1,) + d["gradient"].shape[-2:])
    vmax = max(float(np.abs(per.real).max()), float(np.abs(final.real).max())) or 1.0
    fig = _figure(figsize)
    axes = []
    rows, cols = (b0 + 1, b1) if axis == 0 else (b0, b1 + 1)
    grid = fig.add_gridspec(rows, cols)
    for i in range(b0):
        for j in range(b1):
            ax = fig.add_subplot(grid[i, j])
            _heat(ax, per[i, j].real, vmax=vmax)
            axes.append(ax)
            if i == 0:
                ax.set_title(f"j={j}", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"b={i}", fontsize=9, rotation=0, ha="right", va="center")
    for t in range(len(final)):
        ax = fig.add_subplot(grid[b0, t] if axis == 0 else grid[t, b1])
        _heat(ax, final[t].real, vmax=vmax)
        axes.append(ax)
        if axis == 0 and t == 0:
            ax.set_ylabel("Σ", fontsize=11, rotation=0, ha="right", va="center", color="#c0392b")
        if axis == 1 and t == 0:
            ax.set_title("Σ", fontsize=11, color="#c0392b")
        for spine in ax.spines.values():
            spine.set_color("#c0392b")
            spine.set_linewidth(2)
    bar = fig.colorbar(
        axes[0].images[0], ax=axes, location="bottom", shrink=0.7, aspect=30, pad=0.02
    )
    bar.ax.tick_params(labelsize=8.5)
    bar.set_label(text("one colour scale for every panel"), fontsize=9)
    fig.suptitle(
        text("forward: {} is used by every batch", which)
        + "\n"
        + text("backward: one gradient per batch"),
        fontsize=10,
    )
    fig.supxlabel(
        text("Σ over the broadcast axis {}", axis)
        + " → "
        + text("gradient of {} (its own shape {})", which, d["shape"]),
        fontsize=9,
    )
    return _redraw(fig, plot_broadcast_sum, (x, y, grad, which), {"figsize": figsize})


# ---- registered gradients: BiasAdd broadcasts forward and sums backward -------


def bias_add_data(b, grad, b_bar=None) -> dict:
    """The numbers of ``BiasAdd``'s picture for a batch of rows: the bias
    ``b`` (n,), its broadcast ``1 bᵀ`` (m, n), the upstream gradient ``grad``
    (m, n) and the bias gradient ``b_bar``, the sum of ``grad`` over the rows.

    ``b_bar`` is what the page's tape returned; when given, it must equal
    that sum (to float32 rounding) and it is what is drawn.
    """
    b = as_array(b, "b", allow_complex=False)
    grad = as_array(grad, "grad", allow_complex=False)
    check_ndim(b, "b", 1)
    check_ndim(grad, "grad", 2)
    if grad.shape[1] != b.shape[0]:
        raise ValueError(f"grad must have b's length {b.shape[0]} as columns, got {grad.shape}")
    b_bar = _given_or_computed(b_bar, grad.sum(axis=0), "b_bar", "b")
    return {"b": b, "broadcast": np.broadcast_to(b, grad.shape), "G": grad, "b_bar": b_bar}


def plot_bias_add(b, grad, b_bar=None, *, figsize=(4.8, 4.4), lang="en", words=None):
    """``BiasAdd`` for a batch of rows (:func:`bias_add_data`): forward, the
    bias ``b`` copied into every row; backward, the upstream gradient ``G``
    summed over the rows into ``b̄``. Entries are written in the cells."""
    from matplotlib.patches import ConnectionPatch

    text = _text(lang, words)
    d = bias_add_data(b, grad, b_bar)
    fig = _figure(figsize)
    grid = fig.add_gridspec(2, 2, width_ratios=(1, 1.15))
    vmax = float(np.abs(d["b"]).max())
    gmax = float(max(np.abs(d["G"]).max(), np.abs(d["b_bar"]).max()))
    panels = [
        (grid[0, 0], d["b"][None, :], vmax, "$b$"),
        (grid[0, 1], d["broadcast"], vmax, r"$\mathbf{1}\,b^{\top}$"),
        (grid[1, 0], d["b_bar"][None, :], gmax, r"$\bar{b}$"),
        (grid[1, 1], d["G"], gmax, text("G (upstream gradient)")),
    ]
    axes = []
    for spec, M, scale, title in panels:
        ax = fig.add_subplot(spec)
        _heat(ax, M, vmax=scale, numbers="{:.1f}", aspect="equal")
        ax.set_title(title, fontsize=10)
        axes.append(ax)
    for spine in axes[2].spines.values():
        spine.set_color("#c0392b")
        spine.set_linewidth(2)
    arrows = [
        (axes[0], axes[1], text("broadcast"), "0.3"),
        (axes[3], axes[2], text("sum over rows"), "#c0392b"),
    ]
    for start, end, label, colour in arrows:
        x0 = 1.0 if start is axes[0] else 0.0
        x1 = 0.0 if end is axes[1] else 1.0
        arrow = ConnectionPatch(
            (x0 + (0.04 if x0 else -0.04), 0.5),
            (x1 + (-0.04 if x1 == 0.0 else 0.04), 0.5),
            "axes fraction",
            "axes fraction",
            axesA=start,
            axesB=end,
            arrowstyle="-|>",
            color=colour,
            linewidth=1.5,
        )
        fig.add_artist(arrow)
        end.annotate(
            label,
            (x1 + (-0.08 if x1 == 0.0 else 0.08), 0.5),
            xycoords="axes fraction",
            ha="right" if x1 == 0.0 else "left",
            va="bottom",
            fontsize=8.5,
            color=colour,
        )
    fig.text(0.02, 0.99, text("forward: b is added to every row"), fontsize=9.5, va="top")
    fig.text(0.02, 0.49, text("backward: G is summed over the rows"), fontsize=9.5, va="top")
    return _redraw(fig, plot_bias_add, (b, grad, b_bar), {"figsize": figsize})


# ---- Wirtinger: the complex gradient as a vector --------------------------------


def complex_gradient_data(f, z0, *, half_width=1.5, n=81, h=1e-6) -> dict:
    """A real function ``f`` of a complex ``z`` around ``z0``: the grid of its
    values, and its gradient read as a complex number, ``∂f/∂x + i ∂f/∂y``
    (central differences), which TensorFlow returns (``2 ∂f/∂z̄``);
    JAX's ``grad`` returns its conjugate."""
    check_callable(f, "f")
    z0 = complex(z0)
    dx = (f(z0 + h) - f(z0 - h)) / (2 * h)
    dy = (f(z0 + 1j * h) - f(z0 - 1j * h)) / (2 * h)
    if np.iscomplexobj(np.asarray(dx)) and abs(np.imag(dx)) > 0:
        raise ValueError("f must return real values")
    xs = np.linspace(z0.real - half_width, z0.real + half_width, n)
    ys = np.linspace(z0.imag - half_width, z0.imag + half_width, n)
    Z = xs[None, :] + 1j * ys[:, None]
    values = np.real(np.vectorize(f)(Z))
    return {
        "z0": z0,
        "gradient": complex(dx) + 1j * complex(dy),
        "xs": xs,
        "ys": ys,
        "values": values,
    }


def plot_complex_gradient(
    f, z0, gradient=None, *, scale=None, figsize=(4.2, 4.2), lang="en", words=None
):
    """The gradient of a real ``f(z)`` at ``z0`` drawn as a vector in the plane,
    over the level sets of ``f``: ``∂f/∂x + i ∂f/∂y`` points uphill, across
    the level sets; its conjugate (JAX's ``grad``) is its mirror image.
    ``gradient``: what the page's framework returned (checked against the
    central differences)."""
    text = _text(lang, words)
    d = complex_gradient_data(f, z0)
    g = d["gradient"]
    if gradient is not None:
        if abs(complex(gradient) - g) > 1e-4 * max(1.0, abs(g)):
            raise ValueError(f"gradient {gradient} differs from the central differences {g}")
        g = complex(gradient)
    fig = _figure(figsize)
    ax = fig.add_subplot()
    ax.contour(d["xs"], d["ys"], d["values"], levels=12, colors="0.7", linewidths=0.8)
    z0 = d["z0"]
    # The level set through z0: the gradient is perpendicular to it.
    ax.contour(
        d["xs"], d["ys"], d["values"], levels=[float(np.real(f(z0)))], colors="0.25", linewidths=1.2
    )
    scale = scale or 1.0 / max(abs(g), 1e-12)
    for vec, colour, style, label in (
        (g, "#c0392b", "-", text("∂L/∂x + i ∂L/∂y (TensorFlow)")),
        (g.conjugate(), "#1f5fa8", "--", text("its conjugate (JAX's grad)")),
    ):
        ax.annotate(
            "",
            xy=(z0.real + scale * vec.real, z0.imag + scale * vec.imag),
            xytext=(z0.real, z0.imag),
            arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2, "linestyle": style},
        )
        ax.plot([], [], color=colour, ls=style, lw=2, label=label)
    ax.plot([z0.real], [z0.imag], "ko", ms=4)
    ax.plot([], [], color="0.7", lw=0.8, label=text("level sets of L"))
    ax.set_aspect("equal")
    ax.set_xlabel(text("x = Re z"), fontsize=10)
    ax.set_ylabel(text("y = Im z"), fontsize=10)
    ax.tick_params(labelsize=9)
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    return _redraw(
        fig, plot_complex_gradient, (f, z0, gradient), {"scale": scale, "figsize": figsize}
    )


# ---- reverse-mode costs: what the tape keeps alive -------------------------------


def live_activation_data(forward, backward, forward_mode) -> dict:
    """The counts of :func:`plot_live_activations`, checked.

    ``forward[t]``: activations alive under a tape after layer ``t + 1`` of
    the forward pass. ``backward[t]``: activations alive when the backward
    pass has run the VJPs of the last ``t + 1`` layers. ``forward_mode[t]``:
    activations alive after layer ``t + 1`` in forward mode. All three are
    sequences of ``k`` non-negative integers, ``k >= 1``. Returns them as
    integer arrays with ``steps``, the ``2k`` steps of the two passes, and
    ``tape``, the counts along them.
    """
    counts = {}
    for name, values in (
        ("forward", forward),
        ("backward", backward),
        ("forward_mode", forward_mode),
    ):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise TypeError(f"{name} must be a sequence of counts, got {type(values).__name__}")
        array = np.asarray(values)
        if array.ndim != 1 or array.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {array.shape}")
        if array.dtype.kind not in "iu" or (array < 0).any():
            raise ValueError(f"{name} must hold non-negative integer counts, got {values!r}")
        counts[name] = array.astype(int)
    k = counts["forward"].size
    if counts["backward"].size != k or counts["forward_mode"].size != k:
        raise ValueError(
            f"forward, backward and forward_mode must have the same length, got "
            f"{k}, {counts['backward'].size} and {counts['forward_mode'].size}"
        )
    tape = np.concatenate([counts["forward"], counts["backward"]])
    return {**counts, "steps": np.arange(1, 2 * k + 1), "tape": tape}


def plot_live_activations(
    forward, backward, forward_mode, *, figsize=(4.6, 3.2), lang="en", words=None
):
    """Activations alive at each step of a ``k``-layer chain (the counts of
    :func:`live_activation_data`): under a tape they rise by one per layer of
    the forward pass and fall during the backward pass; forward mode's line
    is flat and has no backward pass."""
    text = _text(lang, words)
    d = live_activation_data(forward, backward, forward_mode)
    k = d["forward"].size
    fig = _figure(figsize)
    ax = fig.add_subplot()
    ax.axvspan(0.5, k + 0.5, color="#1f5fa8", alpha=0.07)
    ax.axvspan(k + 0.5, 2 * k + 0.5, color="#c0392b", alpha=0.07)
    ax.step(
        d["steps"],
        d["tape"],
        where="mid",
        color="#c0392b",
        lw=2,
        label=text("reverse mode: tf.GradientTape"),
    )
    ax.step(
        d["steps"][:k],
        d["forward_mode"],
        where="mid",
        color="#1f5fa8",
        lw=2,
        ls="--",
        label=text("forward mode: tf.autodiff.ForwardAccumulator"),
    )
    top = max(int(d["tape"].max()), int(d["forward_mode"].max()), 1)
    ax.text(k / 2 + 0.5, top * 1.12, text("forward pass"), ha="center", fontsize=9, color="#1f5fa8")
    ax.text(
        1.5 * k + 0.5, top * 1.12, text("backward pass"), ha="center", fontsize=9, color="#c0392b"
    )
    ax.set_ylim(0, top * 1.3)
    ax.set_xticks(d["steps"])
    every = max(1, k // 4)  # sparse labels, so that no two numbers run together

    def label(t, backward=False):
        shown = (t % every == 0 or t == 1) and not (backward and t == k)
        return str(t) if shown else ""

    ax.set_xticklabels(
        [label(t) for t in range(1, k + 1)] + [label(t, True) for t in range(k, 0, -1)]
    )
    ax.set_xlabel(text("layer"), fontsize=10)
    ax.set_ylabel(text("activations alive"), fontsize=10)
    ax.tick_params(labelsize=9)
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    return _redraw(
        fig, plot_live_activations, (forward, backward, forward_mode), {"figsize": figsize}
    )


# ---- HVP costs: the same work, different memory ---------------------------------

#: The Chinese of the words of :func:`plot_hvp_costs` (the page's route names too).
HVP_COSTS_WORDS_ZH = {
    "gradient": "梯度",
    "HVP, reverse over reverse": "HVP，反向套反向",
    "HVP, forward over reverse": "HVP，前向套反向",
    "MatMul kernels run": "运行的 MatMul 内核数",
    "new 64×64 buffers\nheld at the peak": "峰值时持有的\n新 64×64 缓冲区",
    "layers q": "层数 q",
    "+{} per layer": "每层 +{}",
}
#: The two panels of :func:`plot_hvp_costs`: the argument, and its title.
_HVP_PANELS = (
    ("products", "MatMul kernels run"),
    ("buffers", "new 64×64 buffers\nheld at the peak"),
)


def hvp_costs_data(products, buffers) -> dict:
    """The counts of :func:`plot_hvp_costs`, checked.

    ``products`` and ``buffers`` each map a route (a label) to a dict from a
    depth ``q`` (an integer ``q >= 1``) to a count (a non-negative integer):
    the matrix products that the route runs on a chain of ``q`` layers, and
    the buffers that it holds at its peak. Both name the same routes, each
    counted at the same depths, at least two. Returns the ``depths``
    (ascending), the ``routes`` (in the given order), per route its counts
    ``products[route]`` and ``buffers[route]`` (integer arrays in the order
    of ``depths``), and ``per_layer[kind][route]`` (``kind`` is
    ``"products"`` or ``"buffers"``): what one layer adds between the two
    largest depths, a :class:`fractions.Fraction`.
    """
    from fractions import Fraction

    given = {"products": products, "buffers": buffers}
    for name, counts in given.items():
        if not isinstance(counts, dict) or not counts:
            raise TypeError(
                f"{name} must be a non-empty dict from a route to {{q: count}}, "
                f"got {type(counts).__name__}"
            )
    if list(products) != list(buffers):
        raise ValueError(
            f"products and buffers must name the same routes in the same order, got "
            f"{list(products)} and {list(buffers)}"
        )
    depths = None
    for name, counts in given.items():
        for route, by_depth in counts.items():
            if not isinstance(by_depth, dict):
                raise TypeError(
                    f"{name}[{route!r}] must be a dict from q to a count, "
                    f"got {type(by_depth).__name__}"
                )
            if not all(_is_int(q) and q >= 1 for q in by_depth):
                raise ValueError(
                    f"the depths q of {name}[{route!r}] must be integers of at least 1, "
                    f"got {list(by_depth)}"
                )
            these = sorted(int(q) for q in by_depth)
            if depths is None:
                depths = these
            elif these != depths:
                raise ValueError(
                    f"every route must be counted at the same depths: {depths} first, "
                    f"{these} in {name}[{route!r}]"
                )
            for q, count in by_depth.items():
                if not _is_int(count) or count < 0:
                    raise ValueError(
                        f"{name}[{route!r}][{q}] must be a non-negative integer, got {count!r}"
                    )
    if len(depths) < 2:
        raise ValueError(f"the routes must be counted at two depths at least, got {depths}")
    d = {"depths": np.array(depths), "routes": list(products), "per_layer": {}}
    for name, counts in given.items():
        d[name] = {
            r: np.array([int(by_depth[q]) for q in depths]) for r, by_depth in counts.items()
        }
        d["per_layer"][name] = {
            r: Fraction(int(c[-1] - c[-2]), depths[-1] - depths[-2]) for r, c in d[name].items()
        }
    return d


def plot_hvp_costs(products, buffers, *, figsize=(4.8, 3.3), lang="en", words=None):
    """Two panels against the depth ``q`` (the counts of
    :func:`hvp_costs_data`): the matrix products each route runs (left) and
    the buffers it holds at its peak (right), one line per route (at most
    3), each labelled at its end with what one more layer adds. The route
    labels need Chinese in ``words`` unless they are the page's
    (``gradient``, ``HVP, reverse over reverse``, ``HVP, forward over
    reverse``)."""
    text = _text(lang, {**HVP_COSTS_WORDS_ZH, **(words or {})})
    d = hvp_costs_data(products, buffers)
    styles = (("0.45", ":"), ("#c0392b", "-"), ("#1f5fa8", "--"))
    if len(d["routes"]) > len(styles):
        raise ValueError(f"products can have at most {len(styles)} routes, got {len(d['routes'])}")
    depths = d["depths"]
    fig = _figure(figsize)
    axes = fig.subplots(1, 2)
    span = depths[-1] - depths[0]
    for ax, (kind, title) in zip(axes, _HVP_PANELS, strict=True):
        top = max(int(c.max()) for c in d[kind].values()) or 1
        ends = []
        for route, (colour, style) in zip(d["routes"], styles, strict=False):
            counts = d[kind][route]
            ax.plot(depths, counts, style, marker="o", color=colour, lw=2, ms=4, label=text(route))
            ends.append((int(counts[-1]), route, colour))
        # each line's increment per layer at its end, nudged apart so that
        # two lines ending close together keep legible labels
        last = -np.inf
        for end, route, colour in sorted(ends):
            y = max(end, last + 0.1 * top)
            last = y
            step = d["per_layer"][kind][route]
            ax.text(
                depths[-1] + 0.06 * span,
                y,
                text("+{} per layer", f"{float(step):g}"),
                color=colour,
                fontsize=9,
                va="center",
            )
        ax.set_xlim(depths[0] - 0.05 * span, depths[-1] + 0.75 * span)
        ax.set_ylim(0, top * 1.12)
        # a depth's number only where it clears the last one shown
        shown = [depths[0]]
        for q in depths[1:]:
            if q - shown[-1] >= 0.1 * span:
                shown.append(q)
        ax.set_xticks(depths, [str(q) if q in shown else "" for q in depths])
        ax.set_title(text(title), fontsize=9.5)
        ax.set_xlabel(text("layers q"), fontsize=9.5)
        ax.tick_params(labelsize=9)
        ax.spines[["top", "right"]].set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=9, frameon=False)
    return _redraw(fig, plot_hvp_costs, (products, buffers), {"figsize": figsize})


# ---- second derivatives: the least-squares Hessian --------------------------------


def hessian_blocks(H) -> dict:
    """A rank-4 Hessian ``H[a, b, c, d]`` of a matrix function, flattened
    row-major, with its ``(a, c)`` blocks ``H[a, :, c, :]``: ``scales[a, c]``
    is ``c`` when the block is ``c·I`` (else NaN), ``residual`` the largest
    distance of a block from its ``c·I``. For least squares,
    ``scales = XᵀX``."""
    H = as_array(H, "H", allow_complex=False)
    check_ndim(H, "H", 4)
    n, m = H.shape[:2]
    if H.shape != (n, m, n, m):
        raise ValueError(f"H must have shape (n, m, n, m), got {H.shape}")
    flat = H.reshape(n * m, n * m)
    scales = np.empty((n, n))
    residual = 0.0
    for a in range(n):
        for c in range(n):
            block = H[a, :, c, :]
            scale = float(np.trace(block)) / m
            residual = max(residual, float(np.abs(block - scale * np.eye(m)).max()))
            scales[a, c] = scale
    return {"flat": flat, "scales": scales, "residual": residual}


def plot_hessian_structure(H, *, figsize=(4.8, 3.6), lang="en", words=None):
    """The flattened Hessian of a matrix function next to the scales of its
    blocks: for least squares every block is a multiple of the identity, and
    the multiples are ``XᵀX`` (the Hessian is ``XᵀX ⊗ I``). The flattened
    Hessian's rows number the entries of ∇L, its columns those of W; both
    panels share one colour scale."""
    text = _text(lang, words)
    d = hessian_blocks(H)
    n, m = H.shape[:2]
    fig = _figure(figsize)
    grid = fig.add_gridspec(1, 2, width_ratios=[1.5, 1])
    ax = fig.add_subplot(grid[0, 0])
    vmax = float(np.abs(d["flat"]).max())
    _heat(ax, d["flat"], vmax=vmax)
    for p in range(1, n):
        ax.axhline(p * m - 0.5, color="0.3", lw=0.8)
        ax.axvline(p * m - 0.5, color="0.3", lw=0.8)
    ax.set_title(text("flattened Hessian"), fontsize=10)
    ax.set_xlabel(text("entry of W (row-major)"), fontsize=9)
    ax.set_ylabel(text("entry of ∇L (row-major)"), fontsize=9)
    ax_s = fig.add_subplot(grid[0, 1])
    _heat(ax_s, d["scales"], vmax=vmax, numbers="{:.1f}", fontsize=8.5)
    ax_s.set_title(text("block (i, k) = (XᵀX)[i, k] · I"), fontsize=9, wrap=True)
    ax_s.set_aspect("equal")
    bar = fig.colorbar(ax.images[0], ax=[ax, ax_s], location="bottom", shrink=0.7, aspect=30)
    bar.ax.tick_params(labelsize=8.5)
    bar.set_label(text("one colour scale for every panel"), fontsize=9)
    return _redraw(fig, plot_hessian_structure, (H,), {"figsize": figsize})


# ---- einsum, Cholesky: where the registered gradient puts its weight -----------


def cholesky_mask(n) -> np.ndarray:
    """The entrywise weights of ``Φ`` in the Cholesky gradient: 1 below the
    diagonal, ½ on it, 0 above (``Φ(X) = cholesky_mask(n) * X``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    return np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)


def plot_cholesky_pattern(ratio, *, figsize=(4.6, 2.8), lang="en", words=None):
    """Two heat maps of the same size: the weights of ``Φ`` and the page's
    measured ratio of the raw operation's derivative to the registered
    gradient, entry by entry (``ratio``, a real square matrix)."""
    text = _text(lang, words)
    ratio = as_array(ratio, "ratio", allow_complex=False)
    check_ndim(ratio, "ratio", 2)
    n = ratio.shape[0]
    if ratio.shape != (n, n) or not np.isfinite(ratio).all():
        raise ValueError(f"ratio must be a finite square matrix, got shape {ratio.shape}")
    fig = _figure(figsize)
    for k, (M, title) in enumerate(
        (
            (cholesky_mask(n), text("Φ: lower triangle,\nhalf the diagonal")),
            (np.round(ratio, 6) + 0.0, text("raw derivative ÷\nregistered gradient")),
        )
    ):
        ax = fig.add_subplot(1, 2, k + 1)
        _heat(ax, M, vmax=2.0, numbers="{:g}", fontsize=10, cmap="Reds", aspect="equal")
        ax.images[0].set_clim(0.0, 2.0)
        ax.set_title(title, fontsize=9.5)
    return _redraw(fig, plot_cholesky_pattern, (ratio,), {"figsize": figsize})


# ---- frameworks: gradient descent on a complex parameter -----------------------


def descent_path_data(paths, target) -> dict:
    """``paths``: a dict from a label to the iterates ``z_0, z_1, ...`` of a
    descent on a complex parameter (all of one length, at least 2);
    ``target``: the minimiser. Returns, per label, the iterates and their
    distances to the target."""
    if not isinstance(paths, dict) or not paths:
        raise TypeError("paths must be a non-empty dict from a label to iterates")
    target = complex(target)
    out, length = {}, None
    for label, zs in paths.items():
        zs = np.asarray(zs, dtype=complex).ravel()
        if zs.size < 2 or not np.isfinite(zs).all():
            raise ValueError(f"path {label!r} needs at least two finite iterates")
        if length is not None and zs.size != length:
            raise ValueError("all paths must have the same number of iterates")
        length = zs.size
        out[label] = {"z": zs, "distance": np.abs(zs - target)}
    return {"target": target, "paths": out}


def plot_descent_paths(paths, target, *, shown_steps=4, figsize=(4.8, 2.9), lang="en", words=None):
    """Left: the first ``shown_steps`` steps of each path in the complex
    plane, with the target. Right: every path's distance to the target per
    step, on a log scale (a constant factor per step is a straight line)."""
    text = _text(lang, words)
    d = descent_path_data(paths, target)
    w = d["target"]
    fig = _figure(figsize)
    ax, ax_d = fig.subplots(1, 2, width_ratios=[1, 1.15])
    colours = ("#1f5fa8", "#c0392b", "#2e7d32", "#7b1fa2")
    for (label, p), colour in zip(d["paths"].items(), colours, strict=False):
        z = p["z"][: shown_steps + 1]
        ax.plot(z.real, z.imag, "o-", color=colour, ms=3.5, lw=1.4)
        ax_d.semilogy(
            np.arange(p["distance"].size), p["distance"], "o-", color=colour, ms=3, lw=1.4
        )
        ax.plot([], [], "o-", color=colour, ms=3, lw=1.4, label=label)
    ax.plot([w.real], [w.imag], "k*", ms=10, ls="none", label=text("target w"))
    ax.axhline(0, color="0.8", lw=0.8)
    ax.axvline(0, color="0.8", lw=0.8)
    ax.set_xlabel("Re z", fontsize=9)
    ax.set_ylabel("Im z", fontsize=9)
    ax.set_title(text("the first {} steps", shown_steps), fontsize=9.5)
    ax.tick_params(labelsize=8.5)
    ax_d.xaxis.get_major_locator().set_params(integer=True)
    ax_d.set_xlabel(text("step"), fontsize=9)
    ax_d.set_title(text("distance to w"), fontsize=9.5)
    ax_d.tick_params(labelsize=8.5)
    fig.legend(
        fontsize=8.5,
        loc="outside lower center",
        ncols=3,
        frameon=False,
        handlelength=1.6,
        columnspacing=1.0,
    )
    return _redraw(
        fig, plot_descent_paths, (paths, target), {"shown_steps": shown_steps, "figsize": figsize}
    )


# ---- replacing rules: which rule ran, place by place ----------------------------


def rules_that_ran(gradients, rules) -> dict:
    """Which rule gave each gradient of a grid of places and mechanisms.

    ``gradients`` maps each place (a label) to a dict from a mechanism (a
    label, the same for every place) to the gradient computed there.
    ``rules`` maps a rule's name to the value every entry of its gradient has
    (for the identity seeded with ones: 1 for the registered rule, 3 for a
    rule that triples G). Returns the places, the mechanisms, and, place by
    mechanism, the name and value of the rule that ran.
    """
    if not isinstance(gradients, dict) or not gradients:
        raise TypeError("gradients must be a non-empty dict from a place to {mechanism: gradient}")
    if not isinstance(rules, dict) or not rules:
        raise TypeError("rules must be a non-empty dict from a rule's name to its value")
    values = {name: float(v) for name, v in rules.items()}
    if len(set(values.values())) != len(values):
        raise ValueError(f"rules must have distinct values, got {values}")
    places = list(gradients)
    mechanisms = list(gradients[places[0]])
    names = np.empty((len(places), len(mechanisms)), dtype=object)
    for r, place in enumerate(places):
        if not isinstance(gradients[place], dict) or list(gradients[place]) != mechanisms:
            raise ValueError(f"place {place!r} must have the mechanisms {mechanisms}")
        for c, mechanism in enumerate(mechanisms):
            g = as_array(gradients[place][mechanism], f"gradients[{place!r}]", allow_complex=False)
            ran = [n for n, v in values.items() if g.size and np.all(g == v)]
            if not ran:
                raise ValueError(
                    f"the gradient at {place!r} with {mechanism!r} is {g}, no rule's value {values}"
                )
            names[r, c] = ran[0]
    value = np.vectorize(values.get, otypes=[float])(names)
    return {"places": places, "mechanisms": mechanisms, "rule": names, "value": value}


def plot_rules_that_ran(gradients, rules, *, figsize=(4.8, 3.4), lang="en", words=None):
    """A grid of places (rows) by mechanisms (columns), each cell coloured by
    the rule that ran there and showing its value (:func:`rules_that_ran`)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    text = _text(lang, words)
    d = rules_that_ran(gradients, rules)
    names = list(rules)
    colours = ["0.88", "#8fd19e", "#f5c26b", "#9ec5fe"][: len(names)]
    if len(names) > len(colours):
        raise ValueError(f"at most {len(colours)} rules can be drawn, got {len(names)}")
    index = np.vectorize(names.index)(d["rule"])
    fig = _figure(figsize)
    ax = fig.add_subplot()
    ax.imshow(
        index, cmap=ListedColormap(colours), vmin=-0.5, vmax=len(colours) - 0.5, aspect="auto"
    )
    for (r, c), v in np.ndenumerate(d["value"]):
        ax.text(c, r, f"{v:g}", ha="center", va="center", fontsize=10)
    ax.set_xticks(range(len(d["mechanisms"])), [text(m) for m in d["mechanisms"]], fontsize=8.5)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(d["places"])), [text(p) for p in d["places"]], fontsize=8.5)
    ax.set_xticks(np.arange(len(d["mechanisms"]) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(d["places"]) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="both", length=0)
    ax.set_ylabel(text("where the op is"), fontsize=9)
    handles = [Patch(facecolor=col, label=text(n)) for n, col in zip(names, colours, strict=True)]
    fig.legend(
        handles=handles, loc="outside lower center", ncols=len(names), fontsize=8.5, frameon=False
    )
    return _redraw(fig, plot_rules_that_ran, (gradients, rules), {"figsize": figsize})


# ---- chapter 05b: what each route to the Jacobian multiplies ---------------------

#: The Chinese of the words of :func:`plot_jacobian_costs` and of the page's routes.
FIGURE_WORDS_ZH.update(
    {
        "n (T and B are n × n)": "n（T 和 B 都是 n × n）",
        "multiplications": "乘法次数",
        "{}: {}": "{}：{}",
        "one VJP": "一次 VJP",
        "batch_jacobian": "batch_jacobian",
        "tape.jacobian with pfor": "使用 pfor 的 tape.jacobian",
    }
)
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def jacobian_costs_data(counts) -> dict:
    """The counts of :func:`plot_jacobian_costs`, checked.

    ``counts`` maps a route (a label) to a dict from a size ``n`` (``T`` and
    ``B`` are ``n × n``) to the multiplications that the route's products
    make at that size. Every route is counted at the same sizes, at least
    two, each an integer ``n >= 2``; every count is a positive integer.
    Returns the ``sizes`` (ascending), the ``routes`` (in the given order),
    and per route its ``counts`` (an integer array, in the order of
    ``sizes``), its ``slope`` (the least-squares slope of log count against
    log n: a count ``n**p`` has slope ``p``) and its ``power`` (``p`` when the
    count is exactly ``n**p`` at every size, else None).
    """
    if not isinstance(counts, dict) or not counts:
        raise TypeError(
            "counts must be a non-empty dict from a route to {n: multiplications}, "
            f"got {type(counts).__name__}"
        )
    sizes = None
    for route, by_size in counts.items():
        if not isinstance(by_size, dict):
            raise TypeError(
                f"counts[{route!r}] must be a dict from n to multiplications, "
                f"got {type(by_size).__name__}"
            )
        if not all(_is_int(n) for n in by_size):
            raise TypeError(
                f"the sizes n of counts[{route!r}] must be integers, got {list(by_size)}"
            )
        if sizes is None:
            sizes = sorted(int(n) for n in by_size)
        elif sorted(int(n) for n in by_size) != sizes:
            raise ValueError(
                f"every route must be counted at the same sizes: {list(counts)[0]!r} at "
                f"{sizes}, {route!r} at {sorted(int(n) for n in by_size)}"
            )
        for n, count in by_size.items():
            if not _is_int(count):
                raise TypeError(
                    f"counts[{route!r}][{n}] must be an integer, got {type(count).__name__}"
                )
            if count < 1:
                raise ValueError(f"counts[{route!r}][{n}] must be positive, got {count}")
    if len(sizes) < 2 or sizes[0] < 2:
        raise ValueError(f"the sizes n must be at least two integers of at least 2, got {sizes}")
    d = {"sizes": np.array(sizes), "routes": list(counts), "counts": {}, "slope": {}, "power": {}}
    for route, by_size in counts.items():
        values = [int(by_size[n]) for n in sizes]
        slope = float(np.polyfit(np.log(sizes), np.log(values), 1)[0])
        p = round(slope)
        exact = p >= 0 and all(v == n**p for n, v in zip(sizes, values, strict=True))
        d["counts"][route] = np.array(values)
        d["slope"][route] = slope
        d["power"][route] = p if exact else None
    return d


def _count_axes(ax, ticks, xlabel, ylabel, *, base, labelsize):
    """Log axes for counts: a tick at each size drawn, a power of ``base`` per
    major tick written in Unicode (mathtext is slower to draw), a light grid."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(LogLocator(base=base))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda y, _: "10" + str(round(np.log10(y))).translate(_SUPERSCRIPT))
    )
    ax.set_xlabel(xlabel, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=10)
    ax.tick_params(labelsize=labelsize)
    ax.grid(which="major", color="0.9", lw=0.8)


def plot_jacobian_costs(counts, *, figsize=(4.6, 3.4), lang="en", words=None):
    """The multiplications of each route against ``n``, on log axes (the
    counts of :func:`jacobian_costs_data`): a count ``n**p`` is a straight
    line of slope ``p``, labelled ``nᵖ`` in the legend, which lists the
    routes from the costliest down. The route labels need Chinese in
    ``words`` unless they are the page's (``one VJP``, ``batch_jacobian``,
    ``tape.jacobian with pfor``)."""

    text = _text(lang, words)
    d = jacobian_costs_data(counts)
    colours = ("#c0392b", "#7b1fa2", "#1f5fa8", "#2e7d32")
    if len(d["routes"]) > len(colours):
        raise ValueError(f"counts can have at most {len(colours)} routes, got {len(d['routes'])}")
    fig = _figure(figsize)
    ax = fig.add_subplot()
    costliest = sorted(d["routes"], key=lambda r: -d["counts"][r][-1])
    for route, colour in zip(costliest, colours, strict=False):
        p = d["power"][route]
        label = (
            text(route)
            if p is None
            else text("{}: {}", text(route), f"n{p}".translate(_SUPERSCRIPT))
        )
        ax.loglog(d["sizes"], d["counts"][route], "o-", color=colour, lw=2, ms=5, label=label)
    # every other power of ten, large enough that its exponent reads on a phone
    _count_axes(
        ax,
        d["sizes"],
        text("n (T and B are n × n)"),
        text("multiplications"),
        base=100,
        labelsize=10.5,
    )
    ax.legend(fontsize=11, loc="upper left", frameon=False, handlelength=1.5)
    return _redraw(fig, plot_jacobian_costs, (counts,), {"figsize": figsize})


# ---- chapter 07 (complex): the conjugate that the definition asks for ------------

#: The Chinese of the words of :func:`plot_complex_matmul_grad`.
COMPLEX_MATMUL_WORDS_ZH = {
    "by definition\n(finite differences)": "按定义\n（有限差分）",
    "tape.gradient": "tape.gradient",
    "the rule G Bᴴ": "规则 G Bᴴ",
    "without\nthe conjugate": "不取共轭",
}


def complex_matmul_grad_data(A, B, grad=None, G=None, *, h=1e-6) -> dict:
    """The gradient of ``Y = A @ B`` with respect to a complex ``A``, three ways.

    The loss is TensorFlow's real loss ``L = Re⟨G, AB⟩`` (``G``: the upstream
    gradient, the seed of ones when None). ``definition`` is
    ``∂L/∂Re A + i ∂L/∂Im A``, by central differences (step ``h``) in the
    real and imaginary part of each entry, in complex128; ``rule`` is
    ``G Bᴴ``; ``no_conj`` is ``G Bᵀ``, the real rule applied as it is.
    ``grad`` is what the page's ``tape.gradient`` returned; when given, it
    must equal ``G Bᴴ`` (to float32 rounding) and it is returned as
    ``rule``. ``differs[part][column]`` says, for ``part`` ``"real"`` or
    ``"imag"``, whether that part of ``rule`` or ``no_conj`` differs from
    the definition's (beyond the differences' error).
    """
    A, B = as_array(A, "A"), as_array(B, "B")
    check_ndim(A, "A", 2)
    check_ndim(B, "B", 2)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A @ B needs A's columns = B's rows, got {A.shape} and {B.shape}")
    if not isinstance(h, (float, int, np.floating, np.integer)) or isinstance(h, bool):
        raise TypeError(f"h must be a real number, got {h!r}")
    if not h > 0:
        raise ValueError(f"h must be positive, got {h!r}")
    A, B = A.astype(np.complex128), B.astype(np.complex128)
    shape_y = (A.shape[0], B.shape[1])
    if G is None:
        G = np.ones(shape_y, dtype=np.complex128)
    else:
        G = as_array(G, "G").astype(np.complex128)
        if G.shape != shape_y:
            raise ValueError(f"G must have Y = A @ B's shape {shape_y}, got {G.shape}")

    def loss(a):  # Re⟨G, aB⟩ for a stack of a's
        return np.real(np.einsum("ij,nij->n", G.conj(), a @ B))

    basis = np.eye(A.size).reshape((A.size,) + A.shape)  # one entry perturbed per a
    d_re = (loss(A + h * basis) - loss(A - h * basis)) / (2 * h)
    d_im = (loss(A + 1j * h * basis) - loss(A - 1j * h * basis)) / (2 * h)
    definition = (d_re + 1j * d_im).reshape(A.shape)
    rule = G @ B.conj().T
    # The central differences of a linear L are exact up to rounding, about
    # eps |L| / h; any larger gap is a different array, not an error.
    tol = 1e-6 * max(1.0, float(np.abs(definition).max()))
    np.testing.assert_allclose(definition, rule, rtol=0, atol=tol)
    if grad is not None:
        grad = as_array(grad, "grad")
        if grad.shape != A.shape:
            raise ValueError(f"grad must have A's shape {A.shape}, got {grad.shape}")
        gap = float(np.abs(grad - rule).max())
        if gap > 1e-5 * max(1.0, float(np.abs(rule).max())):
            raise ValueError(f"grad differs from G Bᴴ by up to {gap:.2g}")
        rule = grad
    no_conj = G @ B.T
    differs = {
        part: {
            name: bool(np.abs(take(M) - take(definition)).max() > tol)
            for name, M in (("rule", rule), ("no_conj", no_conj))
        }
        for part, take in (("real", np.real), ("imag", np.imag))
    }
    return {
        "definition": definition,
        "rule": rule,
        "no_conj": no_conj,
        "G": G,
        "differs": differs,
    }


def _check_rows(rows, n):
    """``rows``: None (all ``n``) or distinct row indices in ``range(n)``."""
    if rows is None:
        return list(range(n))
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"rows must be a sequence of row indices, got {rows!r}")
    rows = list(rows)
    if not all(isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in rows):
        raise TypeError(f"rows must be a sequence of row indices, got {rows!r}")
    if not rows or len(set(rows)) != len(rows) or not all(0 <= r < n for r in rows):
        raise ValueError(f"rows must be distinct indices in range({n}), at least one, got {rows}")
    return [int(r) for r in rows]


def plot_complex_matmul_grad(
    A,
    B,
    grad=None,
    G=None,
    *,
    rows=None,
    figsize=None,
    lang="en",
    words=None,
):
    """The gradient of ``Y = A @ B`` with respect to complex ``A``
    (:func:`complex_matmul_grad_data`): its real part (top row of panels) and
    imaginary part (bottom row) by definition, by the rule ``G Bᴴ`` (the
    tape's, when ``grad`` is given) and by ``G Bᵀ``, the real rule without
    the conjugate. One colour scale for all six; a part that differs from the
    definition is outlined in red. ``rows``: the rows of the gradient drawn
    (all by default; the complex puzzle's are all equal, so its page draws
    one). ``figsize``: by default 4.8 in wide, and taller the more rows are drawn."""
    text = _text(lang, {**COMPLEX_MATMUL_WORDS_ZH, **(words or {})})
    d = complex_matmul_grad_data(A, B, grad, G)
    shown = _check_rows(rows, d["definition"].shape[0])
    figsize = figsize or (PHONE_WIDTH_IN, 1.5 + 0.6 * len(shown))
    # No mathtext: its fonts cost the page more time than the figure's rest.
    columns = [
        ("definition", text("by definition\n(finite differences)")),
        ("rule", text("tape.gradient" if grad is not None else "the rule G Bᴴ")),
        ("no_conj", text("without\nthe conjugate")),
    ]
    parts = [("real", np.real, "Re"), ("imag", np.imag, "Im")]
    vmax = max(float(np.abs(f(d[k][shown])).max()) for k, _ in columns for _, f, _ in parts)
    fig = _figure(figsize)
    grid = fig.add_gridspec(2, 3)
    for c, (key, title) in enumerate(columns):
        for r, (part, take, label) in enumerate(parts):
            ax = fig.add_subplot(grid[r, c])
            _heat(ax, take(d[key][shown]), vmax=vmax, numbers="{:.2f}", fontsize=9.5)
            if r == 0:
                ax.set_title(title, fontsize=10.5)
            if c == 0:
                ax.set_ylabel(label, fontsize=11, rotation=0, ha="right", va="center")
            if key != "definition" and d["differs"][part][key]:
                for spine in ax.spines.values():
                    spine.set_color("#c0392b")
                    spine.set_linewidth(2.5)
    return _redraw(
        fig,
        plot_complex_matmul_grad,
        (A, B, grad, G),
        {"rows": rows, "figsize": figsize},
    )


# ---- per-example gradients: whose rows the upstream gradients fill ---------------

#: The Chinese of the words of :func:`plot_per_example_upstream`: its own and
#: the per-example page's headings.
PER_EXAMPLE_WORDS_ZH = {
    "each loss reads its own row of Y": "每个损失只读取 Y 中它自己的那一行",
    "each loss reads every row (mean-centred)": "每个损失都读取每一行（减去均值）",
    "zero": "零",
    "row e of G⁽ᵉ⁾": "G⁽ᵉ⁾ 的第 e 行",
}
#: An entry of :func:`per_example_upstream_data` counts as zero when its size
#: is at most this fraction of the largest (float32 rounding, not a value).
ZERO_FRACTION = 1e-6
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def per_example_upstream_data(jacobian) -> dict:
    """The upstream gradients of ``N`` per-example losses, read from the
    Jacobian ``jacobian[e, a, j] = ∂ℓₑ/∂Y[a, j]`` (shape ``(N, N, p)``) of
    the vector of losses with respect to the layer's output ``Y`` (``N × p``).

    Returns ``each`` (the ``N`` matrices ``G⁽ᵉ⁾ = ∂ℓₑ/∂Y``), ``G`` (their sum,
    the upstream gradient of ``Σₑ ℓₑ`` that one backward pass gives),
    ``own`` (row ``e`` of ``G⁽ᵉ⁾``, stacked, ``N × p``), ``outside`` (for each
    ``e``, the largest absolute entry of ``G⁽ᵉ⁾`` outside row ``e``),
    ``zero`` (the entries of ``each`` at most :data:`ZERO_FRACTION` of the
    largest) and ``own_rows``: True when every ``G⁽ᵉ⁾`` is zero outside row
    ``e``, so that row ``e`` of ``G`` is ``G⁽ᵉ⁾``'s own row and the
    per-example gradients are the outer products ``tₑᵀ G[e, :]``.
    """
    jacobian = as_array(jacobian, "jacobian", allow_complex=False)
    check_ndim(jacobian, "jacobian", 3)
    n = jacobian.shape[0]
    if jacobian.shape[1] != n or jacobian.shape[2] == 0 or n == 0:
        raise ValueError(
            f"jacobian must have shape (N, N, p): one loss per row of Y, got {jacobian.shape}"
        )
    if not np.isfinite(jacobian).all():
        raise ValueError("jacobian must be finite")
    rows = np.arange(n)
    own = jacobian[rows, rows]
    off = np.abs(jacobian).copy()
    off[rows, rows] = 0.0
    outside = off.max(axis=(1, 2))
    largest = float(np.abs(jacobian).max())
    zero = np.abs(jacobian) <= ZERO_FRACTION * largest
    return {
        "each": jacobian,
        "G": jacobian.sum(axis=0),
        "own": own,
        "outside": outside,
        "zero": zero,
        "own_rows": bool((outside <= ZERO_FRACTION * largest).all()),
    }


def plot_per_example_upstream(jacobians, *, figsize=(4.8, 4.0), lang="en", words=None):
    """The upstream gradients ``G⁽ᵉ⁾ = ∂ℓₑ/∂Y`` of ``N`` per-example losses
    (:func:`per_example_upstream_data`), one panel per example, and their sum
    ``G`` (last panel, outlined), for each loss of ``jacobians`` (a dict from
    a heading, the page's words, to the Jacobian ``∂ℓ/∂Y`` of shape
    ``(N, N, p)``, at most 3 losses and 6 examples): one row of panels per
    loss. Row ``e`` of ``G⁽ᵉ⁾`` is outlined, zeros are hatched, and every
    panel shares one colour scale."""
    from matplotlib.patches import Patch, Rectangle

    text = _text(lang, {**PER_EXAMPLE_WORDS_ZH, **(words or {})})
    _check_headed("jacobians", jacobians, "∂ℓ/∂Y", most=3, unit="losses")
    data = {}
    for heading, jacobian in jacobians.items():
        data[heading] = per_example_upstream_data(jacobian)
    shapes = {d["each"].shape for d in data.values()}
    if len(shapes) != 1:
        raise ValueError(f"jacobians must share one shape, got {sorted(shapes)}")
    n, _, p = shapes.pop()
    if n > 6:
        raise ValueError(f"at most 6 examples fit a phone's width, got N = {n}")
    vmax = max(
        max(float(np.abs(d["each"]).max()), float(np.abs(d["G"]).max())) for d in data.values()
    )
    vmax = vmax or 1.0
    fig = _figure(figsize)
    outline = "#1b1b1b"
    step = p + 1  # a panel and a blank column: one image per loss, for speed
    axes = fig.subplots(len(data), 1, squeeze=False)[:, 0]
    for ax, (heading, d) in zip(axes, data.items(), strict=True):
        panels = [*d["each"], d["G"]]
        strip = np.full((n, step * (n + 1) - 1), np.nan)
        zeros = np.zeros(strip.shape, dtype=bool)
        for k, M in enumerate(panels):
            strip[:, k * step : k * step + p] = M
            if k < n:
                zeros[:, k * step : k * step + p] = d["zero"][k]
        image = ax.imshow(
            np.ma.masked_invalid(strip),
            cmap="RdBu_r",
            vmin=-vmax,
            vmax=vmax,
            interpolation="nearest",
        )
        if zeros.any():
            _hatch(ax, zeros)
        for k in range(n + 1):
            x0 = k * step - 0.5
            ax.add_patch(
                Rectangle(
                    (x0, -0.5),
                    p,
                    n,
                    fill=False,
                    ec="#c0392b" if k == n else "0.5",
                    lw=2 if k == n else 0.8,
                    clip_on=False,
                )
            )
            if k < n:
                ax.add_patch(
                    Rectangle((x0, k - 0.5), p, 1, fill=False, ec=outline, lw=1.6, clip_on=False)
                )
            title = f"G⁽{str(k).translate(_SUPERSCRIPTS)}⁾" if k < n else "G = Σₑ G⁽ᵉ⁾"
            ax.text(x0 + p / 2, -0.8, title, ha="center", va="bottom", fontsize=10)
        ax.set_title(text(heading), fontsize=9.5, loc="left", pad=19)
        ax.set_axis_off()
    bar = fig.colorbar(image, ax=list(axes), location="bottom", shrink=0.6, aspect=30, pad=0.03)
    bar.ax.tick_params(labelsize=8.5)
    bar.set_label(text("one colour scale for every panel"), fontsize=9)
    handles = [
        Patch(fc="white", ec="0.6", hatch="////", lw=0.6, label=text("zero")),
        Patch(fill=False, ec=outline, lw=1.6, label=text("row e of G⁽ᵉ⁾")),
    ]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=2,
        fontsize=8.5,
        frameon=False,
        handlelength=1.6,
    )
    return _redraw(fig, plot_per_example_upstream, (jacobians,), {"figsize": figsize})


# ---- Hessian costs: what each structure of least squares' Hessian saves ----------

#: The Chinese of the words of :func:`plot_hessian_costs`.
HESSIAN_COSTS_WORDS_ZH = {
    "one-hot seeds, dense (tape.jacobian's and\njax.hessian's count at this page's m)": (
        "稠密的独热种子（本页的 m 下与\ntape.jacobian、jax.hessian 的次数相同）"
    ),
    "their one nonzero column (Jacobian\ncompression's count at this page's m)": (
        "只乘种子的非零列（本页的 m 下\n与雅可比矩阵压缩的次数相同）"
    ),
    "and the δⱼₗ: one seed per k": "再利用 δⱼₗ：每个 k 一个种子",
    "and the unit column: XᵀX,\nthe closed form": "再利用单位列：XᵀX，\n即闭式表达式",
    "m (W is n × m; X stays p × n)": "m（W 为 n × m；X 始终为 p × n）",
    "multiplications": "乘法次数",
    "this page's m": "本页的 m",
    "{}: {}": "{}：{}",
}
#: The ways of building the Hessian that :func:`hessian_costs_data` counts,
#: each exploiting one structure more than the one before it (the figure's words).
#: Each is a NumPy rebuild; TensorFlow and JAX were counted at the page's m only.
HESSIAN_COST_WAYS = (
    "one-hot seeds, dense (tape.jacobian's and\njax.hessian's count at this page's m)",
    "their one nonzero column (Jacobian\ncompression's count at this page's m)",
    "and the δⱼₗ: one seed per k",
    "and the unit column: XᵀX,\nthe closed form",
)


def _hessian_built(X, m, way):
    """The least-squares Hessian for ``X`` and ``W`` of ``m`` columns, built
    the way ``way`` (0 to 3) of :data:`HESSIAN_COST_WAYS` builds it, with its
    products counted; returns ``(H, multiplications)``."""
    from .counting import MultiplicationCounter, matmul

    n = X.shape[1]
    H = np.zeros((n, m, n, m))
    with MultiplicationCounter() as count:
        XtX = matmul(X.T, X) if way == 3 else None
        for k in range(n):
            for col in range(m) if way < 2 else [0]:  # way 2 on: one seed per k
                if way == 0:  # the dense seed E_kl: H[:, :, k, l] = Xᵀ(X E_kl)
                    E = np.zeros((n, m))
                    E[k, col] = 1.0
                    H[:, :, k, col] = matmul(X.T, matmul(X, E))
                elif way < 3:  # its one nonzero column e_k: H[:, l, k, l], l = col
                    H[:, col, k, col] = matmul(X.T, matmul(X, np.eye(n)[:, [k]]))[:, 0]
                else:  # column k of XᵀX, formed once
                    H[:, col, k, col] = XtX[:, k]
            if way >= 2:  # the δⱼₗ: the other seeds of this k, copied
                for col in range(1, m):
                    H[:, col, k, col] = H[:, 0, k, 0]
    return H, count.total


def hessian_costs_data(X, ms) -> dict:
    """The multiplications of four ways of building the Hessian
    ``H[i, j, k, l] = (XᵀX)[i, k] δⱼₗ`` of least squares,
    ``L(W) = ½‖XW − D‖²`` with ``X`` of shape ``(p, n)`` and ``W`` of shape
    ``(n, m)``, for each ``m`` of ``ms``, counted by
    :class:`matgrad.counting.MultiplicationCounter` while each way builds
    ``H`` (each ``H`` is checked against ``XᵀX ⊗ I``). The ways, each
    exploiting one structure more (:data:`HESSIAN_COST_WAYS`):

    0. per one-hot seed ``E_kl`` (``nm`` of them), ``X E_kl`` then
       ``Xᵀ(X E_kl)``, the seed multiplied as a dense ``n × m`` matrix, as
       ``tape.jacobian`` and ``jax.hessian`` do: ``2pn²m²``;
    1. only the seed's nonzero column ``e_k``: ``2pn²m``, the count of
       Jacobian compression's ``n`` dense seeds ``e_k 1ᵀ``;
    2. the ``δⱼₗ`` too, one seed per ``k``, copied to every ``l``: ``2pn²``;
    3. ``XᵀX``, formed once, the closed form: ``pn²``.

    ``ms``: at least two distinct positive integers. Returns ``ms``
    (ascending), ``ways``, ``counts`` (per way, an integer array in the order
    of ``ms``), ``power`` (per way, ``q`` when its count is a constant times
    ``m**q`` at every ``m``, else None) and ``coefficient`` (per way, that
    constant in units of ``pn²``, when it is an integer, else None).
    """
    X = as_array(X, "X", allow_complex=False)
    check_ndim(X, "X", 2)
    if 0 in X.shape:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    if isinstance(ms, (str, bytes)) or not hasattr(ms, "__iter__"):
        raise TypeError(f"ms must be a sequence of integers m, got {ms!r}")
    ms = list(ms)
    if not all(_is_int(m) for m in ms):
        raise TypeError(f"ms must be a sequence of integers m, got {ms!r}")
    if len(set(ms)) != len(ms) or len(ms) < 2 or min(ms) < 1:
        raise ValueError(f"ms must be at least two distinct integers m >= 1, got {ms}")
    ms = sorted(int(m) for m in ms)
    p, n = X.shape
    d = {"ms": np.array(ms), "ways": list(HESSIAN_COST_WAYS), "counts": {}}
    d["power"], d["coefficient"] = {}, {}
    for way, name in enumerate(HESSIAN_COST_WAYS):
        counts = []
        for m in ms:
            H, count = _hessian_built(X, m, way)
            closed = np.einsum("ik,jl->ijkl", X.T @ X, np.eye(m))
            np.testing.assert_allclose(H, closed, rtol=1e-12, atol=1e-12 * np.abs(closed).max())
            counts.append(count)
        counts = np.array(counts)
        q = round(float(np.polyfit(np.log(ms), np.log(counts), 1)[0]))
        exact = all(c * ms[0] ** q == counts[0] * m**q for m, c in zip(ms, counts, strict=True))
        d["counts"][name] = counts
        d["power"][name] = q if exact else None
        base, rest = divmod(int(counts[0]), ms[0] ** q * p * n * n) if exact else (None, 1)
        d["coefficient"][name] = base if rest == 0 else None
    return d


def _hessian_cost_formula(coefficient, power):
    """``2pn²m²`` for coefficient 2 and power 2; None when not a formula."""
    if coefficient is None or power is None:
        return None
    m = "" if power == 0 else "m" if power == 1 else f"m{power}".translate(_SUPERSCRIPT)
    return ("" if coefficient == 1 else str(coefficient)) + "pn²" + m


def plot_hessian_costs(X, ms, *, mark=None, figsize=(4.8, 4.2), lang="en", words=None):
    """The multiplications of the four ways of :func:`hessian_costs_data`
    against ``m``, on log axes, for least squares with ``X`` (``p × n``): a
    count ``m**q`` is a straight line of slope ``q``. The dense one-hot seeds'
    count rises as ``m²``, their one nonzero column's as ``m``, and the
    closed form's does not grow. ``mark``: an ``m`` of ``ms`` marked with a
    dotted line (the page's), or None."""

    text = _text(lang, {**HESSIAN_COSTS_WORDS_ZH, **(words or {})})
    d = hessian_costs_data(X, ms)
    if mark is not None and (not _is_int(mark) or int(mark) not in d["ms"]):
        raise ValueError(f"mark must be None or one of ms {d['ms'].tolist()}, got {mark!r}")
    fig = _figure(figsize)
    ax = fig.add_subplot()
    colours = ("#c0392b", "#7b1fa2", "#1f5fa8", "#2e7d32")
    for name, colour, marker in zip(d["ways"], colours, "osD^", strict=True):
        formula = _hessian_cost_formula(d["coefficient"][name], d["power"][name])
        label = text(name) if formula is None else text("{}: {}", text(name), formula)
        ax.loglog(d["ms"], d["counts"][name], marker + "-", color=colour, lw=2, ms=5, label=label)
    if mark is not None:
        ax.axvline(mark, color="0.4", lw=1, ls=":")
        ax.annotate(
            text("this page's m"),
            (mark, 1),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=9,
            color="0.3",
        )
    _count_axes(
        ax,
        d["ms"],
        text("m (W is n × m; X stays p × n)"),
        text("multiplications"),
        base=10,
        labelsize=10,
    )
    fig.legend(
        loc="outside upper center",
        ncols=1,
        fontsize=9,
        frameon=False,
        handlelength=1.8,
    )
    return _redraw(fig, plot_hessian_costs, (X, ms), {"mark": mark, "figsize": figsize})

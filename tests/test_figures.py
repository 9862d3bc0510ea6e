"""matgrad.figures: the data each figure draws, its Chinese twin, its size on a phone.

The data functions are checked against the book's closed forms (B's row
sums, I ⊗ Bᵀ, G Bᵀ, TensorFlow's own gradient rule, XᵀX ⊗ I), and the
backward pass against the graph TensorFlow traces. Every figure is drawn in
both languages, through the same path as ``matgrad.plotting.show``, and its
smallest text is measured at a phone's width.
"""

from __future__ import annotations

import functools
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from matgrad import figures as F
from matgrad.examples import EXPECTED_SEED_GRAD_ROW, SEED_B, SEED_T
from matgrad.jacobian import matmul_jacobian, numeric_hessian
from matgrad.tf_matmul import batch_matmul_grad, matmul_grad

T64, B64 = SEED_T.astype(np.float64), SEED_B.astype(np.float64)
J = matmul_jacobian(T64, B64, wrt="a")


# ---- data ----------------------------------------------------------------------


def test_puzzle_data_rows_are_b_row_sums():
    d = F.puzzle_data(SEED_T, SEED_B)
    np.testing.assert_array_equal(d["G"], np.ones((5, 3)))
    np.testing.assert_allclose(d["grad"], np.tile(SEED_B.sum(axis=1), (5, 1)), rtol=1e-6)
    np.testing.assert_allclose(d["row_sums"], EXPECTED_SEED_GRAD_ROW, rtol=1e-6)
    np.testing.assert_allclose(d["Y"], SEED_T @ SEED_B)


def test_puzzle_data_checks_the_given_gradient():
    good = np.tile(SEED_B.sum(axis=1), (5, 1))
    assert F.puzzle_data(SEED_T, SEED_B, grad=good)["grad"] is not None
    with pytest.raises(AssertionError):
        F.puzzle_data(SEED_T, SEED_B, grad=good + 0.1)
    with pytest.raises(ValueError, match="T's shape"):
        F.puzzle_data(SEED_T, SEED_B, grad=good[:2])
    with pytest.raises(ValueError, match="T @ B"):
        F.puzzle_data(SEED_T, SEED_B[:2])
    with pytest.raises(TypeError, match="T must have"):
        F.puzzle_data(np.ones((5, 3), dtype=int), SEED_B)


def test_jacobian_block_grid_blocks_and_kronecker():
    M = F.jacobian_block_grid(J)
    assert M.shape == (25, 9)
    for i in range(5):
        for j in range(3):
            block = M[i * 5 : (i + 1) * 5, j * 3 : (j + 1) * 3]
            np.testing.assert_array_equal(block, np.outer(np.eye(5)[i], B64[:, j]))
    # The same entries, flattened the other way, are I ⊗ Bᵀ (chapter 02).
    back = M.reshape(5, 5, 3, 3).transpose(0, 2, 1, 3).reshape(15, 15)
    np.testing.assert_array_equal(back, np.kron(np.eye(5), B64.T))
    with pytest.raises(ValueError, match="rank 4"):
        F.jacobian_block_grid(np.ones((5, 3)))


def test_vjp_slices_for_the_three_seeds():
    seeds = F.default_seeds((5, 3))
    assert list(seeds) == ["ones", "one-hot at (0, 0)", "random G"]
    for G in seeds.values():
        weighted, vjp = F.vjp_slices(J, G)
        np.testing.assert_allclose(weighted.sum(axis=(0, 1)), vjp)
        np.testing.assert_allclose(vjp, G @ B64.T, atol=1e-12)
    _, ones = F.vjp_slices(J, seeds["ones"])
    np.testing.assert_allclose(ones, np.tile(B64.sum(axis=1), (5, 1)))
    _, hot = F.vjp_slices(J, seeds["one-hot at (0, 0)"])
    np.testing.assert_array_equal(hot[0], B64[:, 0])  # B's first column, in row 0
    assert not hot[1:].any()
    with pytest.raises(ValueError, match="output's shape"):
        F.vjp_slices(J, np.ones((3, 5)))


def _one_scale(fig):
    """The clim of every heat map of ``fig``, which must be one symmetric
    scale, and its panels' widths; the figure has one colour bar, on it."""
    images = [im for ax in fig.axes for im in ax.images]
    assert len({im.get_clim() for im in images}) == 1, {im.get_clim() for im in images}
    low, high = images[0].get_clim()
    assert low == -high and high > 0
    bars = [ax for ax in fig.axes if not ax.images and ax.collections]
    assert len(bars) == 1  # the colour bar's axes
    return high, [ax.get_position().width for ax in fig.axes if ax.images]


def test_vjp_slices_share_one_scale_and_equal_widths():
    import matplotlib.pyplot as plt

    seeds = F.default_seeds((5, 3))
    top = F.vjp_slices_scale(J, seeds)
    want = max(
        max(np.abs(G).max(), np.abs(F.vjp_slices(J, G)[0]).max(), np.abs(G @ B64.T).max())
        for G in seeds.values()
    )
    assert top == pytest.approx(want)
    fig = F.plot_vjp_slices(J)
    fig.canvas.draw()
    high, widths = _one_scale(fig)
    assert high == pytest.approx(top) and len(widths) == 9
    np.testing.assert_allclose(widths, widths[0], rtol=1e-6)  # equal panel widths
    plt.close(fig)
    assert F.vjp_slices_scale(J, {"zero": np.zeros((5, 3))}) == 1.0
    with pytest.raises(TypeError, match="seeds"):
        F.vjp_slices_scale(J, {})


def test_broadcast_sum_shares_one_scale():
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 6))
    g = rng.standard_normal((2, 5, 3, 6))
    d = F.broadcast_sum_data(x, y, g, "y")
    fig = F.plot_broadcast_sum(x, y, g, "y")
    fig.canvas.draw()
    high, widths = _one_scale(fig)
    assert len(widths) == 2 * 5 + 5
    assert high == pytest.approx(max(np.abs(d["per_batch"]).max(), np.abs(d["gradient"]).max()))
    plt.close(fig)


def test_backward_ops_are_read_from_the_traced_graph():
    ops = F.backward_ops(names=("T", "B"))
    by_symbol = {op["symbol"]: op for op in ops}
    seed = by_symbol["G"]
    assert seed["type"] in ("Const", "Fill")  # ones: a constant when the shape is static
    if seed["type"] == "Const":
        np.testing.assert_array_equal(seed["value"], np.ones((5, 3)))
    forward = by_symbol["Y"]
    assert forward["type"] == "MatMul" and forward["inputs"] == ["T", "B"]
    assert not forward["transpose_a"] and not forward["transpose_b"]
    assert F.gradient_products(ops) == {"dT": "G Bᵀ", "dB": "Tᵀ G"}
    d_t = by_symbol["G Bᵀ"]
    assert d_t["gradient"] and d_t["output"] and d_t["transpose_b"] and not d_t["transpose_a"]
    assert d_t["inputs"] == [seed["name"], "B"]
    # Watching T only, the tape asks MatMul's gradient for T's branch only.
    only_t = F.backward_ops(names=("T", "B"), sources=("a",))
    assert F.gradient_products(only_t) == {"dT": "G Bᵀ"}
    assert [op["type"] for op in only_t].count("MatMul") == 2


def test_backward_ops_mark_what_runs_and_the_profiler_agrees():
    import tensorflow as tf

    from matgrad.counting import executed_kernels

    T, B = tf.constant(SEED_T), tf.constant(SEED_B)
    for sources, asked in ((("a",), ("a",)), (("a", "b"), ("a", "b")), (("a", "b"), ("a",))):
        ops = F.backward_ops(names=("T", "B"), sources=sources, asked=asked)
        (forward,) = [op for op in ops if op["symbol"] == "Y"]
        assert forward["ran"] is False  # no output needs Y: pruned
        (d_t,) = [op for op in ops if op["symbol"] == "G Bᵀ"]
        assert d_t["ran"] and d_t["output"]
        d_b = [op for op in ops if op["symbol"] == "Tᵀ G"]
        assert len(d_b) == (sources == ("a", "b"))  # in the graph when B is watched
        for op in d_b:  # and it runs when its gradient is asked for
            assert op["ran"] == op["output"] == ("b" in asked)
        # The outputs read the input T only when they hold B's gradient, Tᵀ G.
        assert {op["name"] for op in ops if op["type"] == "Placeholder" and not op["ran"]} == (
            set() if "b" in asked else {"T"}
        )
        ran = sum(op["type"] == "MatMul" and op["ran"] for op in ops)
        assert ran == len(asked)

        @tf.function
        def run(a, b, sources=sources, asked=asked):  # the function backward_ops traces
            chosen = [{"a": a, "b": b}[s] for s in sources]
            with tf.GradientTape() as tape:
                tape.watch(chosen)
                y = tf.matmul(a, b)
            grads = tape.gradient(y, chosen)
            return [g for g, s in zip(grads, sources, strict=True) if s in asked]

        run(T, B)  # traced before the profiler starts
        assert executed_kernels(lambda run=run: run(T, B)) == ran
    # The figure draws the pruned op dashed, and says so in its legend.
    fig = F.plot_backward_graph(F.backward_ops(names=("T", "B"), sources=("a",)))
    styles = {p.get_linestyle() for p in fig.axes[0].patches if hasattr(p, "get_boxstyle")}
    assert "--" in styles and "-" in styles
    assert "not run (pruned)" in {t.get_text() for t in fig.legends[0].get_texts()}
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_backward_ops_rejects_bad_arguments():
    with pytest.raises(ValueError, match="seed"):
        F.backward_ops(seed="zeros")
    with pytest.raises(ValueError, match="sources"):
        F.backward_ops(sources=("c",))
    with pytest.raises(ValueError, match="names"):
        F.backward_ops(names=("G", "B"))
    with pytest.raises(ValueError, match="asked"):
        F.backward_ops(sources=("a",), asked=("b",))
    with pytest.raises(ValueError, match="asked"):
        F.backward_ops(asked=())


# ---- chapter 04b: what tape.gradient returns ---------------------------------------


def _returned_cases():
    """The four targets of chapter 04b's figure, with what the tape returns
    written out in NumPy (no TensorFlow at collection)."""
    from types import SimpleNamespace

    rows = SimpleNamespace(values=np.tile(B64.sum(axis=1), (2, 1)), indices=np.array([0, 2]))
    return {
        "T_tf * 0.0": (np.zeros((5, 3)), lambda t: (t * 0.0) @ B64),
        "cast to int32\nand back": (None, lambda t: np.trunc(t * 10) @ B64),
        "tf.stop_gradient": (None, lambda t: t @ B64),
        "tf.gather,\nrows 0, 2": (rows, lambda t: t[[0, 2]] @ B64),
    }


def test_returned_gradient_data_against_tensorflow_and_the_closed_forms():
    import tensorflow as tf

    T_tf = tf.Variable(SEED_T)
    ones_bt = np.ones((5, 3)) @ B64.T  # the true gradient of Σ TB: 1 Bᵀ
    with tf.GradientTape(persistent=True) as tape:
        targets = {
            "dense": (T_tf @ SEED_B, lambda t: t @ B64),
            "zeros": ((T_tf * 0.0) @ SEED_B, lambda t: (t * 0.0) @ B64),
            "cast": (
                tf.cast(tf.cast(T_tf * 10, tf.int32), tf.float32) @ SEED_B,
                lambda t: np.trunc(t * 10) @ B64,
            ),
            "cut": (tf.stop_gradient(T_tf) @ SEED_B, lambda t: t @ B64),
            "gather": (tf.gather(T_tf, [0, 0, 2]) @ SEED_B, lambda t: t[[0, 0, 2]] @ B64),
        }
    zero = tf.UnconnectedGradients.ZERO
    d = {}
    for name, (Y, f) in targets.items():
        np.testing.assert_allclose(f(T64), Y, rtol=1e-5)  # f is the target
        returned = tape.gradient(Y, T_tf)
        d[name] = F.returned_gradient_data(returned, f, SEED_T)
        # The dense form is what ZERO or tf.convert_to_tensor gives.
        dense = tf.convert_to_tensor(tape.gradient(Y, T_tf, unconnected_gradients=zero))
        np.testing.assert_allclose(d[name]["dense"], dense, rtol=1e-6)
    kinds = {name: data["kind"] for name, data in d.items()}
    assert kinds == {
        "dense": "tf.Tensor",
        "zeros": "tf.Tensor",
        "cast": "None",
        "cut": "None",
        "gather": "tf.IndexedSlices",
    }
    np.testing.assert_allclose(d["dense"]["true"], ones_bt, rtol=1e-8)
    np.testing.assert_allclose(d["cut"]["true"], ones_bt, rtol=1e-8)  # stop_gradient cuts it
    np.testing.assert_array_equal(d["cut"]["dense"], 0)
    np.testing.assert_array_equal(d["zeros"]["true"], 0)
    np.testing.assert_array_equal(d["cast"]["true"], 0)  # constant near this T
    # Gathered rows 0, 0, 2: row 0 counts twice, the other rows are not read.
    assert d["gather"]["indices"].tolist() == [0, 0, 2]
    expect = np.zeros((5, 3))
    expect[0], expect[2] = 2 * B64.sum(axis=1), B64.sum(axis=1)
    np.testing.assert_allclose(d["gather"]["true"], expect, rtol=1e-8)
    np.testing.assert_allclose(d["gather"]["dense"], expect, rtol=1e-6)
    assert {name for name, data in d.items() if data["differs"]} == {"cut"}


def test_plot_returned_gradients_draws_the_stored_rows_and_frames_the_cut():
    import matplotlib.pyplot as plt

    fig = F.plot_returned_gradients(_returned_cases(), SEED_T)
    strips = [np.ma.filled(ax.images[0].get_array(), np.nan) for ax in fig.axes[:3]]
    # One strip per row (returned, made dense, true), a blank column between panels.
    top, dense, true = ([strip[:, 4 * c : 4 * c + 3] for c in range(4)] for strip in strips)
    assert all(np.isnan(strip[:, 4 * c + 3]).all() for strip in strips for c in range(3))
    np.testing.assert_array_equal(top[0], 0)  # a tensor of zeros, stored
    assert np.isnan(top[1]).all() and np.isnan(top[2]).all()  # None: nothing stored
    np.testing.assert_array_equal(np.isnan(top[3]).all(axis=1), [0, 1, 0, 1, 1])
    np.testing.assert_allclose(top[3][[0, 2]], np.tile(B64.sum(axis=1), (2, 1)))
    np.testing.assert_array_equal(dense[2], 0)
    np.testing.assert_allclose(true[2], np.ones((5, 3)) @ B64.T)  # the cut
    np.testing.assert_allclose(dense[3], true[3])
    # Frames: the cut's dense form in red; the two None dashed.
    frames = {
        ax_row: [
            (p.get_x(), matplotlib.colors.to_hex(p.get_edgecolor()), p.get_linestyle())
            for p in ax.patches
            if isinstance(p, matplotlib.patches.Rectangle)
        ]
        for ax_row, ax in enumerate(fig.axes[:3])
    }
    assert [x for x, colour, _ in frames[1] if colour == "#c0392b"] == [2 * 4 - 0.5]
    assert [x for x, _, style in frames[0] if style == "--"] == [4 - 0.5, 2 * 4 - 0.5]
    # Each kind sits on top of its top-row panel, under its heading: never
    # between the rows, where it would read as the heading of a panel below.
    fig.canvas.draw()
    top_ax, dense_ax = fig.axes[:2]
    texts = {t.get_text(): t.get_window_extent() for t in top_ax.texts}
    kinds = ["→ tf.Tensor", "→ None", "→ None", "→ tf.IndexedSlices"]
    assert [t.get_text() for t in top_ax.texts if t.get_text().startswith("→")] == kinds
    top_edge = top_ax.get_window_extent().y1
    assert all(texts[k].y0 >= top_edge for k in kinds)
    assert all(texts[h].y0 >= texts["→ None"].y1 for h in _returned_cases())
    assert top_ax.get_window_extent().y0 > dense_ax.get_window_extent().y1 + 5  # a gap
    plt.close(fig)


def test_returned_gradients_reject_bad_arguments():
    from types import SimpleNamespace

    cases = _returned_cases()
    good, f = cases["tf.gather,\nrows 0, 2"]
    data = F.returned_gradient_data
    with pytest.raises(TypeError, match="T must have a floating"):
        data(None, f, np.ones((5, 3), dtype=int))
    with pytest.raises(ValueError, match="T must have rank 2"):
        data(None, f, SEED_T[0])
    with pytest.raises(TypeError, match="f must be callable, got int"):
        data(None, 3, SEED_T)
    with pytest.raises(TypeError, match="h must be a real number, got True"):
        data(None, f, SEED_T, h=True)
    with pytest.raises(ValueError, match="h must be positive, got 0"):
        data(None, f, SEED_T, h=0)
    with pytest.raises(ValueError, match=r"returned must have T's shape \(5, 3\), got \(3, 5\)"):
        data(np.zeros((3, 5)), f, SEED_T)
    with pytest.raises(TypeError, match="returned must have a floating"):
        data(np.zeros((5, 3), dtype=int), f, SEED_T)
    with pytest.raises(ValueError, match=r"rows of width 3, got shape \(2, 2\)"):
        data(SimpleNamespace(values=np.ones((2, 2)), indices=np.array([0, 2])), f, SEED_T)
    with pytest.raises(TypeError, match="integer row indices, got float64"):
        data(SimpleNamespace(values=good.values, indices=np.array([0.0, 2.0])), f, SEED_T)
    with pytest.raises(ValueError, match=r"2 row indices, one per row.*got shape \(3,\)"):
        data(SimpleNamespace(values=good.values, indices=np.array([0, 1, 2])), f, SEED_T)
    with pytest.raises(ValueError, match=r"in range\(5\), got \[0, 5\]"):
        data(SimpleNamespace(values=good.values, indices=np.array([0, 5])), f, SEED_T)
    with pytest.raises(TypeError, match="f\\(T\\) must have a floating"):
        data(None, lambda t: np.ones(3, dtype=int), SEED_T)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="f must be finite near T"):
        data(None, lambda t: t / 0.0, SEED_T)
    plot = F.plot_returned_gradients
    with pytest.raises(TypeError, match="non-empty dict.*list"):
        plot([cases["tf.stop_gradient"]], SEED_T)
    with pytest.raises(TypeError, match="non-empty dict"):
        plot({}, SEED_T)
    with pytest.raises(ValueError, match="at most 4 cases.*got 5"):
        plot({**cases, "tf.gather, again": cases["tf.stop_gradient"]}, SEED_T)
    with pytest.raises(TypeError, match="heading must be a string, got 3"):
        plot({3: cases["tf.stop_gradient"]}, SEED_T)
    with pytest.raises(TypeError, match="pair \\(returned, f\\), got None"):
        plot({"tf.stop_gradient": None}, SEED_T)
    repeated = SimpleNamespace(values=np.ones((3, 3)), indices=np.array([0, 0, 2]))
    with pytest.raises(ValueError, match=r"repeat an index, \[0, 0, 2\]"):
        plot({"tf.stop_gradient": (repeated, lambda t: t[[0, 0, 2]] @ B64)}, SEED_T)


def test_the_four_branches_agree_with_matmul_grad():
    branches = F.matmul_grad_branches()
    assert branches[False, False] == {"dA": "G Bᵀ", "dB": "Aᵀ G"}
    rng = np.random.default_rng(1)
    for (ta, tb), products in branches.items():
        a = rng.standard_normal((3, 5) if ta else (5, 3))
        b = rng.standard_normal((3, 3))
        g = rng.standard_normal((5, 3))
        arrays = {"A": a, "B": b, "G": g}

        def evaluate(product, arrays=arrays):
            x, y = product.split()
            value = [arrays[f.rstrip("ᵀ")].T if f.endswith("ᵀ") else arrays[f] for f in (x, y)]
            return value[0] @ value[1]

        want_a, want_b = matmul_grad(a, b, g, transpose_a=ta, transpose_b=tb)
        np.testing.assert_allclose(evaluate(products["dA"]), want_a, atol=1e-12)
        np.testing.assert_allclose(evaluate(products["dB"]), want_b, atol=1e-12)


def test_broadcast_sum_data_matches_batch_matmul_grad():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 6))
    g = rng.standard_normal((2, 5, 3, 6))
    gx, gy = batch_matmul_grad(x, y, g)
    dy = F.broadcast_sum_data(x, y, g, "y")
    assert dy["axes"] == (0,) and dy["per_batch"].shape == (2, 5, 4, 6)
    np.testing.assert_allclose(dy["per_batch"].sum(axis=0), gy)
    dx = F.broadcast_sum_data(x, y, g, "x")
    assert dx["axes"] == (1,) and dx["per_batch"].shape == (2, 5, 3, 4)
    np.testing.assert_allclose(dx["per_batch"].sum(axis=1, keepdims=True), gx)
    with pytest.raises(ValueError, match="which"):
        F.broadcast_sum_data(x, y, g, "z")


def test_complex_gradient_is_two_d_f_d_conj_z():
    z0 = 0.6 + 0.5j
    d = F.complex_gradient_data(lambda z: abs(z) ** 2, z0)
    assert abs(d["gradient"] - 2 * z0) < 1e-6  # 2 ∂|z|²/∂z̄ = 2z
    assert d["values"].shape == (81, 81)
    with pytest.raises(TypeError):
        F.complex_gradient_data(3, z0)


def test_live_activation_data_joins_the_two_passes():
    d = F.live_activation_data([1, 2, 3], [2, 1, 0], [1, 1, 1])
    np.testing.assert_array_equal(d["tape"], [1, 2, 3, 2, 1, 0])
    np.testing.assert_array_equal(d["steps"], np.arange(1, 7))
    np.testing.assert_array_equal(d["forward_mode"], [1, 1, 1])
    fig = F.plot_live_activations([1, 2, 3], [2, 1, 0], [1, 1, 1])
    tape_line, forward_line = fig.axes[0].get_lines()[:2]
    np.testing.assert_array_equal(tape_line.get_ydata(), [1, 2, 3, 2, 1, 0])
    np.testing.assert_array_equal(forward_line.get_ydata(), [1, 1, 1])
    with pytest.raises(ValueError, match="same length"):
        F.live_activation_data([1, 2], [1], [1, 1])
    with pytest.raises(ValueError, match="non-negative integer"):
        F.live_activation_data([1, -1], [1, 0], [1, 1])
    with pytest.raises(ValueError, match="non-negative integer"):
        F.live_activation_data([1.5], [0], [1])
    with pytest.raises(ValueError, match="non-empty"):
        F.live_activation_data([], [], [])
    with pytest.raises(TypeError, match="sequence of counts"):
        F.live_activation_data(3, [0], [1])


def test_hessian_blocks_of_least_squares_are_xtx():
    rng = np.random.default_rng(0)
    X, D = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))

    def loss(W):
        return 0.5 * np.sum((X @ W - D) ** 2)

    H = numeric_hessian(loss, rng.standard_normal((3, 2)))
    d = F.hessian_blocks(H)
    np.testing.assert_allclose(d["scales"], X.T @ X, rtol=1e-6, atol=1e-6)
    assert d["residual"] < 1e-6
    np.testing.assert_allclose(d["flat"], np.kron(X.T @ X, np.eye(2)), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"\(n, m, n, m\)"):
        F.hessian_blocks(np.ones((3, 2, 2, 3)))


def test_bias_add_data_broadcasts_b_and_sums_g_over_the_rows():
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(1)
    b, G = rng.standard_normal(3), rng.standard_normal((4, 3))
    b_t = tf.Variable(b)
    with tf.GradientTape() as tape:
        y = tf.nn.bias_add(tf.zeros((4, 3), tf.float64), b_t)
    tape_b = tape.gradient(y, b_t, output_gradients=G).numpy()
    d = F.bias_add_data(b, G, tape_b)
    np.testing.assert_array_equal(d["broadcast"], y.numpy())
    np.testing.assert_allclose(d["b_bar"], G.sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(F.bias_add_data(b, G)["b_bar"], G.sum(axis=0))
    with pytest.raises(AssertionError):
        F.bias_add_data(b, G, tape_b + 0.1)
    with pytest.raises(ValueError, match="b's length"):
        F.bias_add_data(b, G[:, :2])
    with pytest.raises(ValueError, match="b's shape"):
        F.bias_add_data(b, G, tape_b[:2])
    with pytest.raises(TypeError, match="b must have"):
        F.bias_add_data(np.ones(3, dtype=int), G)


def test_cholesky_mask_is_phi_of_the_registered_rule():
    from matgrad.linalg_grads import cholesky_grad

    rng = np.random.default_rng(4)
    X = rng.standard_normal((4, 4))
    mask = F.cholesky_mask(4)
    np.testing.assert_array_equal(np.diag(mask), 0.5)
    np.testing.assert_array_equal(np.triu(mask, 1), 0)
    np.testing.assert_array_equal(np.tril(mask, -1), np.tril(np.ones((4, 4)), -1))
    # with F = I the rule is the Hermitian part of Φ(G): the mask, symmetrised
    np.testing.assert_allclose(cholesky_grad(np.eye(4), X), (mask * X + (mask * X).T) / 2)
    with pytest.raises(TypeError, match="integer"):
        F.cholesky_mask(2.0)
    with pytest.raises(ValueError, match="positive"):
        F.cholesky_mask(0)
    with pytest.raises(ValueError, match="square"):
        F.plot_cholesky_pattern(np.ones((2, 3)))


def _descent_paths(steps=10, lr=0.25, w=1 + 2j):
    """Descent on |z - w|^2, whose TensorFlow gradient is 2(z - w) and whose
    JAX gradient is its conjugate: along conj(JAX's) the error halves."""
    paths = {}
    for label, step in (("z - lr * grad", lambda g: g), ("z - lr * conj(grad)", np.conj)):
        zs = [0j]
        for _ in range(steps):
            jax_grad = np.conj(2 * (zs[-1] - w))
            zs.append(zs[-1] - lr * step(jax_grad))
        paths[label] = zs
    return paths, w


def test_descent_path_data_halves_along_the_conjugate():
    paths, w = _descent_paths()
    d = F.descent_path_data(paths, w)
    right = d["paths"]["z - lr * conj(grad)"]["distance"]
    np.testing.assert_allclose(right[1:] / right[:-1], 0.5)
    wrong = d["paths"]["z - lr * grad"]["z"]
    np.testing.assert_allclose(wrong[-1], (1 - 0.5**10) + 1j * (2 - 2 * 1.5**10))
    with pytest.raises(TypeError, match="dict"):
        F.descent_path_data([0j, 1j], w)
    with pytest.raises(ValueError, match="same number"):
        F.descent_path_data({"a": [0j, 1j], "b": [0j, 1j, 2j]}, w)
    with pytest.raises(ValueError, match="two finite"):
        F.descent_path_data({"a": [0j]}, w)


def test_rules_that_ran_names_the_rule_of_each_place_and_mechanism():
    tf = pytest.importorskip("tensorflow")

    @tf.custom_gradient
    def tripled(x):
        return tf.identity(x), lambda g: 3 * g

    x = tf.constant([1.0, 2.0])

    def tape_gradient(op):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = op(x)
        return tape.gradient(y, x)

    places = {
        "eager": tape_gradient,
        "traced": lambda op: tf.function(lambda: tape_gradient(op))(),
    }
    mechanisms = {"registered": tf.identity, "custom": tripled}
    gradients = {
        place: {m: run(op).numpy() for m, op in mechanisms.items()} for place, run in places.items()
    }
    rules = {"registered rule (G)": 1.0, "replacement rule (3G)": 3.0}
    d = F.rules_that_ran(gradients, rules)
    assert d["places"] == ["eager", "traced"] and d["mechanisms"] == ["registered", "custom"]
    assert d["rule"].tolist() == [["registered rule (G)", "replacement rule (3G)"]] * 2
    np.testing.assert_array_equal(d["value"], [[1.0, 3.0], [1.0, 3.0]])
    with pytest.raises(ValueError, match="no rule's value"):
        F.rules_that_ran({"a": {"m": np.array([1.0, 3.0])}}, rules)
    with pytest.raises(ValueError, match="mechanisms"):
        F.rules_that_ran({"a": {"m": np.ones(2)}, "b": {"n": np.ones(2)}}, rules)
    with pytest.raises(ValueError, match="distinct"):
        F.rules_that_ran(gradients, {"a": 1.0, "b": 1.0})
    with pytest.raises(TypeError, match="gradients must be"):
        F.rules_that_ran([], rules)
    with pytest.raises(TypeError, match="must have a floating"):
        F.rules_that_ran({"a": {"m": np.ones(2, dtype=int)}}, rules)


# ---- drawing: both languages, legible on a phone ---------------------------------


# The figures drawn below, by name. Collected without drawing anything: the
# backward graph's data runs TensorFlow, and pytest-xdist collects on each worker.
FIGURES = (
    "puzzle",
    "blocks",
    "vjp",
    "graph",
    "returns",
    "branches",
    "broadcast",
    "bias",
    "complex",
    "complex_matmul",
    "tape",
    "hvp",
    "costs",
    "hessian_costs",
    "hessian",
    "cholesky",
    "descent",
    "rules",
    "upstream",
)


@functools.cache
def _figures():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 6))
    g = rng.standard_normal((2, 5, 3, 6))
    X = rng.standard_normal((6, 3))
    H = np.einsum("ac,bd->abcd", X.T @ X, np.eye(2))
    return {
        "puzzle": (F.plot_puzzle, (SEED_T, SEED_B), {}),
        "blocks": (F.plot_jacobian_blocks, (J,), {}),
        "vjp": (F.plot_vjp_slices, (J,), {}),
        "graph": (F.plot_backward_graph, (F.backward_ops(names=("T", "B")),), {}),
        "returns": (F.plot_returned_gradients, (_returned_cases(), SEED_T), {}),
        "branches": (F.plot_matmul_branches, (F.matmul_grad_branches(),), {}),
        "broadcast": (F.plot_broadcast_sum, (x, y, g), {}),
        "bias": (F.plot_bias_add, (rng.standard_normal(3), rng.standard_normal((4, 3))), {}),
        "complex": (F.plot_complex_gradient, (lambda z: abs(z * z - 1) ** 2, 0.6 + 0.5j), {}),
        "complex_matmul": (
            F.plot_complex_matmul_grad,
            (SEED_T * (1 + 1j), SEED_B * (1 - 2j)),
            {"rows": [0]},
        ),
        "tape": (F.plot_live_activations, ([1, 2, 3, 4], [3, 2, 1, 0], [1] * 4), {}),
        "hvp": (F.plot_hvp_costs, _hvp_costs(), {}),
        "costs": (F.plot_jacobian_costs, (_jacobian_costs(),), {}),
        "hessian_costs": (F.plot_hessian_costs, (X[:4], (1, 2, 4, 8)), {"mark": 2}),
        "hessian": (F.plot_hessian_structure, (H,), {}),
        "cholesky": (F.plot_cholesky_pattern, (2 * F.cholesky_mask(3),), {}),
        "descent": (F.plot_descent_paths, _descent_paths(), {}),
        "rules": (F.plot_rules_that_ran, _rule_grid(), {}),
        "upstream": (F.plot_per_example_upstream, (_upstream_jacobians(),), {}),
    }


def _rule_grid():
    places = ["tf.gradients in a tf.function", "tape inside, op made directly", "tape, eager"]
    gradients = {
        p: {
            "override map": np.full(2, 1.0 if "tape" in p else 3.0),
            "tf.custom_gradient": np.full(2, 3.0),
        }
        for p in places
    }
    return gradients, {"registered rule (G)": 1.0, "replacement rule (3G)": 3.0}


@pytest.mark.parametrize("name", FIGURES)
def test_each_figure_in_both_languages_is_legible_on_a_phone(name, monkeypatch):
    import matplotlib.pyplot as plt

    from matgrad import plotting

    assert tuple(_figures()) == FIGURES  # a figure added to one list and not the other
    function, args, kwargs = _figures()[name]
    fig = function(*args, **kwargs)
    assert fig.get_size_inches()[0] <= F.PHONE_WIDTH_IN
    assert F.smallest_text_px(fig) >= F.MIN_TEXT_PX, name
    english = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    shown = []
    monkeypatch.setattr(
        "IPython.display.display", lambda data, **kw: shown.append((data, kw["metadata"]))
    )
    plotting.show(fig=fig)  # draws the Chinese twin through fig.matgrad_redraw
    ((data, metadata),) = shown
    assert metadata["matgrad"]["zh_CN"]["image/png"] != data["image/png"]
    with plt.rc_context({"font.family": ["DejaVu Sans", plotting.cjk_font()]}):
        zh = fig.matgrad_redraw("zh_CN", None)
        chinese = {t.get_text() for t in zh.findobj(matplotlib.text.Text)}
        assert F.smallest_text_px(zh) >= F.MIN_TEXT_PX
    # Every English phrase of the figure is translated or is math and code only.
    english_words = {
        t
        for t in english
        if any(w in t for w in ("the ", " of ", "seed", "over"))
        and not re.fullmatch(r"[\w.]+", t)  # a code name, such as gradient_override_map
    }
    assert not english_words & chinese, english_words & chinese
    plt.close("all")


def test_figures_refuse_a_figure_too_wide_for_a_phone():
    with pytest.raises(ValueError, match="at most"):
        F.plot_puzzle(SEED_T, SEED_B, figsize=(8, 4))


def test_smallest_text_px_scales_wide_figures_down():
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(7.16, 2), dpi=100)
    fig.text(0.5, 0.5, "x", fontsize=10)
    fig.text(0.0, 0.0, ".")
    fig.text(1.0, 1.0, ".")
    # 716 px wide shown in 358: half of 10 pt at 100 dpi (13.9 px).
    assert F.smallest_text_px(fig, 358) == pytest.approx(10 / 72 * 100 * 358 / 716, rel=0.05)
    plt.close(fig)


def test_matmul_branches_take_the_pages_names_for_the_gradients():
    fig = F.plot_matmul_branches(F.matmul_grad_branches(), labels={"dA": "Ā", "dB": "B̄"})
    texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    assert {"Ā =", "B̄ ="} <= texts and "dA =" not in texts
    with pytest.raises(ValueError, match="labels"):
        F.plot_matmul_branches(F.matmul_grad_branches(), labels={"dC": "C̄"})


# ---- chapter 05b: what each route to the Jacobian multiplies ---------------------


def _route_counts(sizes=(2, 3, 4)):
    """The multiplications of one VJP, batch_jacobian and tape.jacobian with
    pfor for Y = T @ B, T and B n × n, read from TensorFlow's traced graphs."""
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import graph_matmul_multiplications

    def route(kind):
        @tf.function
        def run(T, B):
            with tf.GradientTape() as tape:
                tape.watch(T)
                Y = T @ B
            if kind == "one VJP":
                return tape.gradient(Y, T, output_gradients=tf.ones_like(Y))
            return getattr(tape, kind)(Y, T)

        return run

    counts = {}
    for kind in ("one VJP", "batch_jacobian", "jacobian"):
        run = route(kind)
        name = "tape.jacobian with pfor" if kind == "jacobian" else kind
        counts[name] = {}
        for n in sizes:
            spec = tf.TensorSpec((n, n), tf.float32)
            graph = run.get_concrete_function(spec, spec).graph
            counts[name][n] = sum(graph_matmul_multiplications(graph))
    return counts


def _jacobian_costs():
    """The counts of the phone-legibility test: n³, n⁴ and n⁵ at four sizes."""
    sizes, routes = (16, 32, 64, 128), ("one VJP", "batch_jacobian", "tape.jacobian with pfor")
    return {name: {n: n ** (3 + k) for n in sizes} for k, name in enumerate(routes)}


def test_jacobian_costs_data_reads_the_powers_of_the_traced_graphs():
    counts = _route_counts()
    d = F.jacobian_costs_data(counts)
    np.testing.assert_array_equal(d["sizes"], [2, 3, 4])
    assert d["routes"] == ["one VJP", "batch_jacobian", "tape.jacobian with pfor"]
    # the table's counts: n passes of n³ for batch_jacobian, n² for tape.jacobian
    assert d["power"] == {"one VJP": 3, "batch_jacobian": 4, "tape.jacobian with pfor": 5}
    for name, p in d["power"].items():
        np.testing.assert_array_equal(d["counts"][name], np.array([2, 3, 4]) ** p)
        assert d["slope"][name] == pytest.approx(p)
    # n⁵ + n³ (forward mode) is no power of n; its slope is the least-squares one
    sizes = np.array([4, 16, 64, 256])
    forward = {int(n): int(n**5 + n**3) for n in sizes}
    d = F.jacobian_costs_data({"forward, vectorized": forward})
    assert d["power"] == {"forward, vectorized": None}
    x, y = np.log(sizes), np.log(sizes.astype(float) ** 5 + sizes**3)
    want = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()
    assert d["slope"]["forward, vectorized"] == pytest.approx(want)
    assert 4.98 < want < 5  # below 5: the share of n³ shrinks as n grows
    # keys in any order, NumPy integers: sorted by n, counted exactly
    d = F.jacobian_costs_data({"r": {np.int64(128): 128**5, 16: 16**5}})
    np.testing.assert_array_equal(d["counts"]["r"], [16**5, 128**5])
    assert d["power"] == {"r": 5}


def test_plot_jacobian_costs_draws_the_counts_costliest_first():
    import matplotlib.pyplot as plt

    counts = {"one VJP": {2: 8, 4: 64}, "tape.jacobian with pfor": {2: 32, 4: 1024}}
    fig = F.plot_jacobian_costs(counts)
    ax = fig.axes[0]
    assert [line.get_ydata().tolist() for line in ax.get_lines()] == [[32, 1024], [8, 64]]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["tape.jacobian with pfor: n⁵", "one VJP: n³"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    zh = fig.matgrad_redraw("zh_CN", None)
    assert [t.get_text() for t in zh.axes[0].get_legend().get_texts()] == [
        "使用 pfor 的 tape.jacobian：n⁵",
        "一次 VJP：n³",
    ]
    plt.close("all")


def test_jacobian_costs_data_rejects_bad_arguments():
    with pytest.raises(TypeError, match="counts must be a non-empty dict.*got list"):
        F.jacobian_costs_data([8, 64])
    with pytest.raises(TypeError, match="counts must be a non-empty dict.*got dict"):
        F.jacobian_costs_data({})
    with pytest.raises(TypeError, match=r"counts\['a'\] must be a dict.*got list"):
        F.jacobian_costs_data({"a": [8, 64]})
    with pytest.raises(TypeError, match=r"sizes n of counts\['a'\] must be integers"):
        F.jacobian_costs_data({"a": {2.0: 8, 4: 64}})
    with pytest.raises(TypeError, match=r"sizes n of counts\['a'\] must be integers"):
        F.jacobian_costs_data({"a": {True: 8, 4: 64}})
    with pytest.raises(ValueError, match=r"same sizes: 'a' at \[2, 4\], 'b' at \[2, 3\]"):
        F.jacobian_costs_data({"a": {2: 8, 4: 64}, "b": {2: 8, 3: 27}})
    with pytest.raises(TypeError, match=r"counts\['a'\]\[4\] must be an integer, got float"):
        F.jacobian_costs_data({"a": {2: 8, 4: 64.0}})
    with pytest.raises(ValueError, match=r"counts\['a'\]\[4\] must be positive, got 0"):
        F.jacobian_costs_data({"a": {2: 8, 4: 0}})
    with pytest.raises(ValueError, match=r"at least two integers of at least 2, got \[4\]"):
        F.jacobian_costs_data({"a": {4: 64}})
    with pytest.raises(ValueError, match=r"at least two integers of at least 2, got \[1, 4\]"):
        F.jacobian_costs_data({"a": {1: 1, 4: 64}})
    five = {f"r{k}": {2: 2**k, 4: 4**k} for k in range(5)}
    with pytest.raises(ValueError, match="at most 4 routes, got 5"):
        F.plot_jacobian_costs(five)
    with pytest.raises(ValueError, match="no Chinese"):
        F.plot_jacobian_costs({"a route": {2: 8, 4: 64}}, lang="zh_CN")


# ---- HVP costs: the same work, different memory ------------------------------------

HVP_ROUTES = ("gradient", "HVP, reverse over reverse", "HVP, forward over reverse")


def _hvp_products(depths=(1, 2, 4)):
    """The MatMul kernels that each route runs on the HVP page's chain of q
    tanh layers (8 × 8, float64), counted by TensorFlow's profiler."""
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import executed_kernels
    from matgrad.hvp import gradient, hvp_forward_over_reverse, hvp_reverse_over_reverse

    rng = np.random.default_rng(1)
    Y0 = tf.constant(rng.standard_normal((8, 8)))
    C = tf.Variable(rng.standard_normal((8, 8)) / 4)
    U = tf.constant(rng.standard_normal((8, 8)))

    def chain(C, q):
        Y, C = Y0, tf.convert_to_tensor(C)
        for _ in range(q):
            Y = tf.tanh(Y @ C)
        return tf.reduce_sum(Y)

    def run(route, q):
        def loss(C):
            return chain(C, q)

        if route == "gradient":
            return lambda: gradient(loss, C)
        hvp = hvp_reverse_over_reverse if "reverse over" in route else hvp_forward_over_reverse
        return lambda: hvp(loss, C, U)

    for route in HVP_ROUTES:  # warm-up: forward over reverse traces its JVPs
        run(route, 2)()
    return {r: {q: executed_kernels(run(r, q), "MatMul") for q in depths} for r in HVP_ROUTES}


def _hvp_costs():
    """The counts of the phone-legibility test: the page's laws at q = 1, 2, 3, 8."""
    depths = (1, 2, 3, 8)
    laws = ((3, -1, 1, 2), (9, -5, 5, 1), (9, -3, 2, 4))
    products = {
        r: {q: a * q + b for q in depths} for r, (a, b, _, _) in zip(HVP_ROUTES, laws, strict=True)
    }
    buffers = {
        r: {q: c * q + e for q in depths} for r, (_, _, c, e) in zip(HVP_ROUTES, laws, strict=True)
    }
    return products, buffers


def test_hvp_costs_data_reads_the_products_per_layer_from_the_profiler():
    from fractions import Fraction

    products = _hvp_products()
    # each layer adds one forward, one weight and one input product to the
    # gradient, and an HVP differentiates each of them twice over: 3 and 9
    buffers = {r: {4: 10, 2: 6, 1: 3} for r in HVP_ROUTES}  # keys in any order
    d = F.hvp_costs_data(products, buffers)
    np.testing.assert_array_equal(d["depths"], [1, 2, 4])
    assert d["routes"] == list(HVP_ROUTES)
    assert d["per_layer"]["products"] == dict(zip(HVP_ROUTES, [3, 9, 9], strict=True))
    np.testing.assert_array_equal(d["products"]["gradient"], [2, 5, 11])  # 3q - 1
    np.testing.assert_array_equal(d["products"]["HVP, reverse over reverse"], [4, 13, 31])
    for r in HVP_ROUTES:
        np.testing.assert_array_equal(d["buffers"][r], [3, 6, 10])
        assert d["per_layer"]["buffers"][r] == 2  # (10 - 6) / (4 - 2), not 3 from q = 1
    # an increment that is no whole number stays exact
    d = F.hvp_costs_data({"r": {1: 1, 4: 3}}, {"r": {1: 0, np.int64(4): 1}})
    assert d["per_layer"] == {"products": {"r": Fraction(2, 3)}, "buffers": {"r": Fraction(1, 3)}}


def test_plot_hvp_costs_draws_both_panels_with_the_increments():
    import matplotlib.pyplot as plt

    products, buffers = _hvp_costs()
    fig = F.plot_hvp_costs(products, buffers)
    left, right = fig.axes
    assert [line.get_ydata().tolist() for line in left.get_lines()] == [
        [a * q + b for q in (1, 2, 3, 8)] for a, b in ((3, -1), (9, -5), (9, -3))
    ]
    assert {t.get_text() for t in right.texts} == {"+1 per layer", "+5 per layer", "+2 per layer"}
    zh = fig.matgrad_redraw("zh_CN", None)
    assert {t.get_text() for t in zh.axes[0].texts} == {"每层 +3", "每层 +9"}
    plt.close("all")


def test_hvp_costs_data_rejects_bad_arguments():
    good = {"r": {1: 2, 2: 5}}
    with pytest.raises(TypeError, match="products must be a non-empty dict.*got list"):
        F.hvp_costs_data([2, 5], good)
    with pytest.raises(TypeError, match="buffers must be a non-empty dict.*got dict"):
        F.hvp_costs_data(good, {})
    with pytest.raises(ValueError, match=r"same routes.*\['r'\] and \['s'\]"):
        F.hvp_costs_data(good, {"s": {1: 2, 2: 5}})
    with pytest.raises(TypeError, match=r"buffers\['r'\] must be a dict.*got list"):
        F.hvp_costs_data(good, {"r": [2, 5]})
    with pytest.raises(ValueError, match=r"depths q of products\['r'\] must be integers"):
        F.hvp_costs_data({"r": {1.0: 2, 2: 5}}, good)
    with pytest.raises(ValueError, match=r"depths q of products\['r'\].*got \[0, 2\]"):
        F.hvp_costs_data({"r": {0: 2, 2: 5}}, good)
    with pytest.raises(ValueError, match=r"same depths: \[1, 2\] first, \[1, 3\] in buffers"):
        F.hvp_costs_data(good, {"r": {1: 2, 3: 5}})
    with pytest.raises(ValueError, match=r"products\['r'\]\[2\] must be a non-negative.*-5"):
        F.hvp_costs_data({"r": {1: 2, 2: -5}}, good)
    with pytest.raises(ValueError, match=r"buffers\['r'\]\[2\] must be a non-negative.*5.0"):
        F.hvp_costs_data(good, {"r": {1: 2, 2: 5.0}})
    with pytest.raises(ValueError, match=r"two depths at least, got \[1\]"):
        F.hvp_costs_data({"r": {1: 2}}, {"r": {1: 2}})
    four = {f"r{k}": {1: k, 2: k} for k in range(4)}
    with pytest.raises(ValueError, match="at most 3 routes, got 4"):
        F.plot_hvp_costs(four, four)
    with pytest.raises(ValueError, match="no Chinese"):
        F.plot_hvp_costs({"a route": {1: 2, 2: 5}}, {"a route": {1: 2, 2: 5}}, lang="zh_CN")


# ---- chapter 07 (complex): the conjugate that the definition asks for -------------


def test_complex_matmul_grad_data_is_the_real_coordinates_gradient():
    rng = np.random.default_rng(7)

    def c(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    A, B, G = c(3, 4), c(4, 2), c(3, 2)
    d = F.complex_matmul_grad_data(A, B, G=G)
    # Independent, in real arithmetic: with Re Y = Ar Br - Ai Bi and
    # Im Y = Ar Bi + Ai Br, L = Σ Gr Re Y + Gi Im Y has these derivatives.
    Br, Bi, Gr, Gi = B.real, B.imag, G.real, G.imag  # L is linear: no A here
    d_re = Gr @ Br.T + Gi @ Bi.T
    d_im = -Gr @ Bi.T + Gi @ Br.T
    np.testing.assert_allclose(d["definition"], d_re + 1j * d_im, atol=1e-8)
    np.testing.assert_allclose(d["rule"], d_re + 1j * d_im, atol=1e-12)
    np.testing.assert_allclose(d["no_conj"], G @ B.T)
    # With a complex G, dropping the conjugate changes both parts.
    assert d["differs"] == {
        "real": {"rule": False, "no_conj": True},
        "imag": {"rule": False, "no_conj": True},
    }


def test_complex_matmul_grad_data_of_the_complex_puzzle_matches_the_tape():
    tf = pytest.importorskip("tensorflow")
    T_c = tf.Variable((SEED_T * (1 + 1j)).astype(np.complex64))
    B_c = tf.Variable((SEED_B * (1 - 2j)).astype(np.complex64))
    with tf.GradientTape() as tape:
        y = T_c @ B_c
    tape_grad = tape.gradient(y, T_c).numpy()
    d = F.complex_matmul_grad_data(T_c.numpy(), B_c.numpy(), tape_grad)
    np.testing.assert_array_equal(d["rule"], tape_grad)  # what is drawn is the tape's
    np.testing.assert_allclose(d["definition"], tape_grad, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(d["G"], np.ones((5, 3)))
    # The seed is real, so only the imaginary parts of G B_cᵀ (B_c's row sums) differ.
    row_sums = (SEED_B.astype(np.float64) * (1 - 2j)).sum(axis=1)
    np.testing.assert_allclose(d["no_conj"], np.tile(row_sums, (5, 1)), rtol=1e-6)
    np.testing.assert_allclose(
        d["definition"].real, np.tile(EXPECTED_SEED_GRAD_ROW, (5, 1)), rtol=1e-5
    )
    assert d["differs"] == {
        "real": {"rule": False, "no_conj": False},
        "imag": {"rule": False, "no_conj": True},
    }
    # The figure outlines exactly the panel that differs: Im of G B_cᵀ.
    import matplotlib.pyplot as plt

    fig = F.plot_complex_matmul_grad(T_c.numpy(), B_c.numpy(), tape_grad)
    red = [
        i
        for i, ax in enumerate(fig.axes)
        if matplotlib.colors.same_color(ax.spines["top"].get_edgecolor(), "#c0392b")
    ]
    assert red == [5]  # column by column: definition, tape, no conjugate; Re above Im
    assert fig.axes[2].get_title() == "tape.gradient"
    plt.close(fig)


def test_complex_matmul_grad_data_rejects_bad_arguments():
    A, B = SEED_T * (1 + 1j), SEED_B * (1 - 2j)
    with pytest.raises(TypeError, match="A must have"):
        F.complex_matmul_grad_data(np.ones((5, 3), dtype=int), B)
    with pytest.raises(ValueError, match="B must have rank 2"):
        F.complex_matmul_grad_data(A, B[0])
    with pytest.raises(ValueError, match="A's columns = B's rows"):
        F.complex_matmul_grad_data(A, B[:2])
    with pytest.raises(ValueError, match=r"G must have Y = A @ B's shape \(5, 3\)"):
        F.complex_matmul_grad_data(A, B, G=np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"grad must have A's shape \(5, 3\)"):
        F.complex_matmul_grad_data(A, B, np.ones((3, 5)))
    with pytest.raises(ValueError, match="grad differs from G Bᴴ"):
        F.complex_matmul_grad_data(A, B, np.ones((5, 3)) @ B.T)  # no conjugate
    with pytest.raises(ValueError, match="h must be positive, got 0"):
        F.complex_matmul_grad_data(A, B, h=0)
    with pytest.raises(TypeError, match="h must be a real number"):
        F.complex_matmul_grad_data(A, B, h="1e-6")
    with pytest.raises(TypeError, match="rows must be a sequence of row indices"):
        F.plot_complex_matmul_grad(A, B, rows=0)
    with pytest.raises(TypeError, match="rows must be a sequence of row indices"):
        F.plot_complex_matmul_grad(A, B, rows=[0.0])
    with pytest.raises(ValueError, match=r"rows must be distinct indices in range\(5\)"):
        F.plot_complex_matmul_grad(A, B, rows=[5])
    with pytest.raises(ValueError, match="rows must be distinct"):
        F.plot_complex_matmul_grad(A, B, rows=[0, 0])
    with pytest.raises(ValueError, match="rows must be distinct"):
        F.plot_complex_matmul_grad(A, B, rows=[])


# ---- per-example gradients: the upstream gradient of each example's loss ---------

# The page's headings, whose Chinese the module knows.
UPSTREAM_HEADINGS = ("each loss reads its own row of Y", "each loss reads every row (mean-centred)")


def _own_row_losses(Y):
    return np.tanh(Y).sum(axis=1)


def _centred_losses(Y):
    return np.tanh(Y - Y.mean(axis=0, keepdims=True)).sum(axis=1)


@functools.cache
def _upstream_jacobians():
    """∂ℓ/∂Y of the page's two losses at Y = TB, by central differences."""
    from matgrad.jacobian import numeric_jacobian

    Y = T64 @ B64
    return dict(
        zip(
            UPSTREAM_HEADINGS,
            (numeric_jacobian(_own_row_losses, Y), numeric_jacobian(_centred_losses, Y)),
            strict=True,
        )
    )


def test_per_example_upstream_data_against_the_closed_forms():
    from matgrad.jacobian import numeric_jacobian

    Y = T64 @ B64
    N = len(Y)
    own_jac, centred_jac = _upstream_jacobians().values()
    # Losses of their own rows: G⁽ᵉ⁾ is s = 1 - tanh²(Y) in row e, zero elsewhere.
    s = 1 - np.tanh(Y) ** 2
    d = F.per_example_upstream_data(own_jac)
    assert d["own_rows"]
    np.testing.assert_array_equal(d["outside"], 0)  # a nudge of row a moves loss a only
    assert d["zero"].sum() == N * (N - 1) * Y.shape[1]
    np.testing.assert_allclose(d["own"], s, rtol=1e-8)
    np.testing.assert_allclose(d["G"], s, rtol=1e-8)  # the rows of G are the own rows
    # Mean-centred: G⁽ᵉ⁾[a] = s_e (δ_ea - 1/N), with s_e at the centred row.
    s_c = 1 - np.tanh(Y - Y.mean(axis=0)) ** 2
    d = F.per_example_upstream_data(centred_jac)
    assert not d["own_rows"] and not d["zero"].any()
    np.testing.assert_allclose(d["own"], (1 - 1 / N) * s_c, rtol=1e-7)
    np.testing.assert_allclose(d["outside"], s_c.max(axis=1) / N, rtol=1e-7)
    np.testing.assert_allclose(d["G"], s_c - s_c.mean(axis=0), atol=1e-8)
    # G is the gradient of the summed loss, which one backward pass gives.
    summed = numeric_jacobian(lambda y: _centred_losses(y).sum(), Y)
    np.testing.assert_allclose(d["G"], summed, atol=1e-8)


def test_plot_per_example_upstream_draws_each_g_and_their_sum():
    import matplotlib.pyplot as plt

    jacobians = _upstream_jacobians()
    fig = F.plot_per_example_upstream(jacobians)
    strips = [ax.images[0].get_array() for ax in fig.axes if ax.images]
    assert len(strips) == 2  # one strip of panels per loss
    for strip, jac in zip(strips, jacobians.values(), strict=True):
        assert strip.shape == (5, 6 * 4 - 1)  # six 5 x 3 panels, a blank column between
        for e in range(5):
            np.testing.assert_array_equal(strip[:, 4 * e : 4 * e + 3], jac[e])
            if e < 4:
                assert strip.mask[:, 4 * e + 3].all()
        np.testing.assert_allclose(strip[:, 20:], jac.sum(axis=0))
    plt.close(fig)


def test_per_example_upstream_rejects_bad_arguments():
    jac = _upstream_jacobians()["each loss reads its own row of Y"]
    with pytest.raises(TypeError, match="jacobian must have a floating"):
        F.per_example_upstream_data(np.ones((5, 5, 3), dtype=int))
    with pytest.raises(ValueError, match="jacobian must have rank 3"):
        F.per_example_upstream_data(jac[0])
    with pytest.raises(ValueError, match=r"\(N, N, p\).*\(5, 4, 3\)"):
        F.per_example_upstream_data(jac[:, :4])
    with pytest.raises(ValueError, match="finite"):
        F.per_example_upstream_data(np.full((2, 2, 1), np.nan))
    with pytest.raises(TypeError, match="non-empty dict.*list"):
        F.plot_per_example_upstream([jac])
    with pytest.raises(TypeError, match="non-empty dict"):
        F.plot_per_example_upstream({})
    with pytest.raises(TypeError, match="heading must be a string, got 3"):
        F.plot_per_example_upstream({3: jac})
    with pytest.raises(ValueError, match="at most 3 losses, got 4"):
        F.plot_per_example_upstream({str(k): jac for k in range(4)})
    with pytest.raises(ValueError, match="share one shape"):
        F.plot_per_example_upstream({"a": jac, "b": jac[:4, :4]})
    with pytest.raises(ValueError, match="at most 6 examples.*N = 7"):
        F.plot_per_example_upstream({"a": np.ones((7, 7, 2))})


# ---- Hessian costs: what each structure of least squares' Hessian saves ----------


@pytest.mark.parametrize(("shape", "ms"), [((4, 3), (1, 2, 4, 8)), ((2, 5), (5, 3))])
def test_hessian_costs_data_counts_the_tables_rows(shape, ms):
    X = np.random.default_rng(1).standard_normal(shape)
    d = F.hessian_costs_data(X, ms)
    p, n = shape
    m = np.array(sorted(ms))
    np.testing.assert_array_equal(d["ms"], m)
    assert d["ways"] == list(F.HESSIAN_COST_WAYS)
    # the page's table: nm dense seeds of two products of pnm; nm seeds of two
    # products of pn; n seeds of two of pn; one product XᵀX of pn²
    want = [
        2 * (n * m) * (p * n * m),
        2 * (n * m) * (p * n),
        2 * n * (p * n) + 0 * m,
        p * n * n + 0 * m,
    ]
    for way, counts in zip(d["ways"], want, strict=True):
        np.testing.assert_array_equal(d["counts"][way], counts)
    assert list(d["power"].values()) == [2, 1, 0, 0]
    assert list(d["coefficient"].values()) == [2, 2, 2, 1]
    # the gap to the closed form: 2m² for dense seeds, 2m for compression
    closed = d["counts"][d["ways"][3]]
    np.testing.assert_array_equal(d["counts"][d["ways"][0]], 2 * m**2 * closed)
    np.testing.assert_array_equal(d["counts"][d["ways"][1]], 2 * m * closed)


def test_each_way_builds_the_least_squares_hessian():
    X = np.random.default_rng(2).standard_normal((4, 3))
    closed = np.einsum("ik,jl->ijkl", X.T @ X, np.eye(2))
    for way in range(4):
        H, _ = F._hessian_built(X, 2, way)
        np.testing.assert_allclose(H, closed, rtol=1e-12, atol=1e-12)
    # and it is the Hessian of L(W) = ½‖XW − D‖², by differences of its gradient
    D = np.random.default_rng(3).standard_normal((4, 2))
    H_num = numeric_hessian(lambda W: 0.5 * np.sum((X @ W - D) ** 2), np.zeros((3, 2)))
    np.testing.assert_allclose(H_num, closed, atol=1e-6)


def test_plot_hessian_costs_draws_each_way_with_its_formula():
    import matplotlib.pyplot as plt

    X = np.random.default_rng(1).standard_normal((4, 3))
    fig = F.plot_hessian_costs(X, (1, 2, 4), mark=2)
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    assert [line.get_ydata().tolist() for line in lines] == [
        [72, 288, 1152],
        [72, 144, 288],
        [72, 72, 72],
        [36, 36, 36],
    ]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [t.rsplit(": ", 1)[1] for t in legend] == ["2pn²m²", "2pn²m", "2pn²", "pn²"]
    assert any(line.get_xdata()[0] == 2 for line in ax.get_lines() if line not in lines)
    zh = fig.matgrad_redraw("zh_CN", None)
    zh_legend = [t.get_text() for t in zh.legends[0].get_texts()]
    assert [t.rsplit("：", 1)[1] for t in zh_legend] == ["2pn²m²", "2pn²m", "2pn²", "pn²"]
    plt.close("all")


def test_hessian_costs_rejects_bad_arguments():
    X = np.ones((4, 3))
    with pytest.raises(TypeError, match="X must have a floating"):
        F.hessian_costs_data(np.ones((4, 3), dtype=int), (1, 2))
    with pytest.raises(ValueError, match="X must have rank 2"):
        F.hessian_costs_data(np.ones(3), (1, 2))
    with pytest.raises(ValueError, match=r"X must have at least one row.*\(0, 3\)"):
        F.hessian_costs_data(np.ones((0, 3)), (1, 2))
    for bad in (3, "12", [1.0, 2], [True, 2]):
        with pytest.raises(TypeError, match="ms must be a sequence of integers"):
            F.hessian_costs_data(X, bad)
    for bad in ([2], [2, 2], [0, 2]):
        with pytest.raises(ValueError, match=r"ms must be at least two distinct integers m >= 1"):
            F.hessian_costs_data(X, bad)
    for bad in (3, 2.0):
        with pytest.raises(ValueError, match=r"mark must be None or one of ms \[1, 2\], got"):
            F.plot_hessian_costs(X, (1, 2), mark=bad)
    with pytest.raises(ValueError, match="at most"):
        F.plot_hessian_costs(X, (1, 2), figsize=(6, 4))

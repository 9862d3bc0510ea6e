"""matgrad.Tape against tf.GradientTape on generated programs."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.examples import SEED_B, SEED_T
from matgrad.tape import Tape, Variable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

OPS = [
    "matmul",
    "add_row",
    "add_col",
    "sub_row",
    "rsub_col",
    "square",
    "scale",
    "transpose",
    "colsum",
    "flat_roundtrip",
    "reuse_input",
]


class _NumPyLib:
    matmul = staticmethod(lambda a, b: a @ b)
    transpose = staticmethod(lambda a: a.T)
    reshape = staticmethod(lambda a, s: a.reshape(s))
    colsum = staticmethod(lambda a: a.sum(axis=0))


class _TFLib:
    matmul = staticmethod(tf.matmul)
    transpose = staticmethod(tf.transpose)
    reshape = staticmethod(tf.reshape)
    colsum = staticmethod(lambda a: tf.reduce_sum(a, axis=0))


def _program(lib, ops, x, w, seed):
    """Apply ``ops`` to x @ w; constants come from a seeded generator, same for both libs."""
    rng = np.random.default_rng(seed)
    y = lib.matmul(x, w)
    base = tuple(int(d) for d in y.shape)
    for op in ops:
        r, c = (int(d) for d in y.shape)
        if op == "matmul":
            y = lib.matmul(y, rng.standard_normal((c, c)))
        elif op == "add_row":
            y = y + rng.standard_normal(c)  # broadcast over rows
        elif op == "add_col":
            y = y + rng.standard_normal((r, 1))  # broadcast over columns
        elif op == "sub_row":
            y = y - rng.standard_normal(c)  # Variable - constant
        elif op == "rsub_col":
            y = rng.standard_normal((r, 1)) - y  # constant - Variable
        elif op == "square":
            y = y * y
        elif op == "scale":
            y = y * rng.standard_normal((1, c))
        elif op == "transpose":
            y = lib.transpose(y)
        elif op == "colsum":
            y = lib.reshape(lib.colsum(y), (1, c))
        elif op == "flat_roundtrip":
            y = lib.reshape(lib.reshape(y, (r * c,)), (r, c))
        elif op == "reuse_input" and (r, c) == base:
            y = y + lib.matmul(x, w)  # two paths to x and w
    return y


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 4),
    k=st.integers(1, 4),
    n=st.integers(1, 4),
    ops=st.lists(st.sampled_from(OPS), max_size=5),
    seed=st.integers(0, 2**16),
    upstream=st.booleans(),
)
def test_tape_matches_gradienttape(m, k, n, ops, seed, upstream):
    rng = np.random.default_rng(seed + 1)
    x0, w0 = rng.standard_normal((m, k)), rng.standard_normal((k, n))

    with Tape() as tape:
        x, w = tape.watch(x0), tape.watch(w0)
        y = _program(_NumPyLib, ops, x, w, seed)
    xt, wt = tf.Variable(x0), tf.Variable(w0)
    with tf.GradientTape() as tft:
        yt = _program(_TFLib, ops, xt, wt, seed)

    np.testing.assert_allclose(y.value, yt.numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(y.shape) if upstream else None
    ours = tape.gradient(y, [x, w], output_gradients=g)
    theirs = tft.gradient(yt, [xt, wt], output_gradients=None if g is None else tf.constant(g))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-9, atol=1e-12)


def test_seed_puzzle_default_and_upstream():
    with Tape() as tape:
        T = tape.watch(SEED_T)
        Y = T @ SEED_B
    g = tape.gradient(Y, T)
    # BLAS may add a 1-row and a 5-row product in different orders: a tolerance.
    np.testing.assert_allclose(
        g, np.tile(np.ones((1, 3), np.float32) @ SEED_B.T, (5, 1)), rtol=1e-6
    )
    onehot = np.zeros((5, 3), np.float32)
    onehot[0, 0] = 1
    np.testing.assert_array_equal(tape.gradient(Y, T, output_gradients=onehot)[0], SEED_B[:, 0])


def test_unused_source_is_none_and_constants_work():
    with Tape() as tape:
        a = tape.watch(np.ones((2, 2)))
        b = tape.watch(np.ones((2, 2)))
        y = np.full((2, 2), 3.0) @ a  # ndarray @ Variable uses __rmatmul__
    ga, gb = tape.gradient(y, [a, b])
    assert gb is None
    np.testing.assert_array_equal(ga, np.full((2, 2), 6.0))


def test_operations_outside_the_tape_are_not_recorded():
    with Tape() as tape:
        a = tape.watch(np.ones(3))
    y = (a * a).sum()
    assert tape.gradient(y, a) is None


def test_errors():
    with Tape() as tape:
        a = tape.watch(np.ones((2, 3)))
        y = a @ np.ones((3, 2))
    with pytest.raises(TypeError, match="the Tape does not know the operation 'tanh'"):
        np.tanh(a)
    with pytest.raises(TypeError, match="the Tape does not know the operation 'concatenate'"):
        np.concatenate([a, a])
    with pytest.raises(ValueError, match=r"target's shape \(2, 2\), got shape \(2, 3\)"):
        tape.gradient(y, a, output_gradients=np.ones((2, 3)))
    with pytest.raises(TypeError, match="needs a floating or complex array, got int64"):
        tape.watch(np.arange(3))
    with pytest.raises(TypeError, match="target must be a Variable"):
        tape.gradient(np.ones(2), a)
    with pytest.raises(TypeError, match="operand must have a floating"):
        with Tape():
            a @ np.ones((3, 2), dtype=np.int32)
    assert isinstance(y, Variable)


def test_complex_target_is_differentiated_as_re_sum_conj_g_times_target():
    # The docstring: the scalar is Re sum(conj(G) * target); check by central differences.
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    g = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    with Tape() as tape:
        x = tape.watch(a)
        y = x @ b
    grad = tape.gradient(y, x, output_gradients=g)
    loss = lambda z: np.real(np.sum(np.conj(g) * (z @ b)))
    h, expected = 1e-6, np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = 1
        d_re = (loss(a + h * e) - loss(a - h * e)) / (2 * h)
        d_im = (loss(a + 1j * h * e) - loss(a - 1j * h * e)) / (2 * h)
        expected[idx] = d_re + 1j * d_im
    np.testing.assert_allclose(grad, expected, rtol=1e-7, atol=1e-8)

"""matgrad.tf_matmul against TensorFlow: every flag, four dtypes, broadcast batches."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.tf_matmul import (
    batch_matmul_grad,
    fd_matmul_grad,
    matmul_grad,
    tf_batch_matmul_grad,
    tf_matmul_grad,
)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
MODES = ["plain", "transpose", "adjoint"]  # how each operand enters the product


def _tol(dtype):
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    return dict(rtol=1e-5, atol=1e-5) if single else dict(rtol=1e-11, atol=1e-12)


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@st.composite
def matmul_cases(draw, dtypes=DTYPES):
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    mode_a, mode_b = draw(st.sampled_from(MODES)), draw(st.sampled_from(MODES))
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = _random(rng, (k, m) if mode_a != "plain" else (m, k), dtype)
    b = _random(rng, (n, k) if mode_b != "plain" else (k, n), dtype)
    g = _random(rng, (m, n), dtype)
    flags = dict(
        transpose_a=mode_a == "transpose",
        adjoint_a=mode_a == "adjoint",
        transpose_b=mode_b == "transpose",
        adjoint_b=mode_b == "adjoint",
    )
    return a, b, g, flags


def _tape(a, b, g, **flags):
    a_t, b_t = tf.Variable(a), tf.Variable(b)
    with tf.GradientTape() as tape:
        y = tf.linalg.matmul(a_t, b_t, **flags)
    return [t.numpy() for t in tape.gradient(y, [a_t, b_t], output_gradients=g)]


def _close(ours, theirs, dtype):
    for x, y in zip(ours, theirs, strict=True):
        assert x.shape == y.shape
        np.testing.assert_allclose(x, y, **_tol(dtype))


@settings(max_examples=200, deadline=None)
@given(matmul_cases())
def test_matches_gradienttape(case):
    a, b, g, flags = case
    _close(matmul_grad(a, b, g, **flags), _tape(a, b, g, **flags), a.dtype)


@settings(max_examples=40, deadline=None)
@given(matmul_cases())
def test_matches_registered_function(case):
    a, b, g, flags = case
    _close(matmul_grad(a, b, g, **flags), tf_matmul_grad(a, b, g, **flags), a.dtype)


@settings(max_examples=40, deadline=None)
@given(matmul_cases(dtypes=[np.float64, np.complex128]))
def test_matches_finite_differences(case):
    a, b, g, flags = case
    for x, y in zip(matmul_grad(a, b, g, **flags), fd_matmul_grad(a, b, g, **flags), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-8)


@st.composite
def batch_cases(draw):
    ndim = draw(st.integers(0, 2))
    batch = [draw(st.integers(1, 3)) for _ in range(ndim)]
    bx = [1 if draw(st.booleans()) else s for s in batch]
    by = [1 if draw(st.booleans()) else s for s in batch]
    bx = bx[draw(st.integers(0, ndim)) :]  # x may lack leading axes
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    adj_x, adj_y = draw(st.booleans()), draw(st.booleans())
    dtype = draw(st.sampled_from([np.float64, np.complex128]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = _random(rng, tuple(bx) + ((k, m) if adj_x else (m, k)), dtype)
    y = _random(rng, tuple(by) + ((n, k) if adj_y else (k, n)), dtype)
    out_batch = np.broadcast_shapes(tuple(bx), tuple(by))
    g = _random(rng, out_batch + (m, n), dtype)
    if x.ndim == 2 and y.ndim == 2:  # BatchMatMul needs a batch
        x, y, g = x[None], y[None], g[None]
    return x, y, g, adj_x, adj_y


@settings(max_examples=80, deadline=None)
@given(batch_cases())
def test_batch_matches_gradienttape(case):
    x, y, g, adj_x, adj_y = case
    ours = batch_matmul_grad(x, y, g, adj_x=adj_x, adj_y=adj_y)
    x_t, y_t = tf.Variable(x), tf.Variable(y)
    with tf.GradientTape() as tape:
        out = tf.linalg.matmul(x_t, y_t, adjoint_a=adj_x, adjoint_b=adj_y)
    theirs = [t.numpy() for t in tape.gradient(out, [x_t, y_t], output_gradients=g)]
    _close(ours, theirs, x.dtype)
    assert ours[0].shape == x.shape and ours[1].shape == y.shape


@settings(max_examples=25, deadline=None)
@given(batch_cases())
def test_batch_matches_registered_function(case):
    x, y, g, adj_x, adj_y = case
    _close(
        batch_matmul_grad(x, y, g, adj_x=adj_x, adj_y=adj_y),
        tf_batch_matmul_grad(x, y, g, adj_x=adj_x, adj_y=adj_y),
        x.dtype,
    )


def test_the_book_example_shapes():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 6))
    g = rng.standard_normal((2, 5, 3, 6))
    gx, gy = batch_matmul_grad(x, y, g)
    assert gx.shape == (2, 1, 3, 4) and gy.shape == (5, 4, 6)
    _close((gx, gy), tf_batch_matmul_grad(x, y, g), np.float64)


def test_errors_name_arguments_and_shapes():
    a, b, g = np.ones((3, 4)), np.ones((4, 2)), np.ones((3, 2))
    with pytest.raises(ValueError, match=r"incompatible shapes: a \(3, 4\).*b \(3, 2\)"):
        matmul_grad(a, np.ones((3, 2)), g)
    with pytest.raises(
        ValueError, match=r"grad must have the product's shape \(3, 2\), got \(2, 3\)"
    ):
        matmul_grad(a, b, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"a must have rank 2, got rank 1 with shape \(4,\)"):
        matmul_grad(np.ones(4), b, g)
    with pytest.raises(TypeError, match="a must have a floating or complex dtype, got int64"):
        matmul_grad(np.ones((3, 4), dtype=np.int64), b, g)
    with pytest.raises(TypeError, match="grad must have a floating or complex dtype, got <U1"):
        matmul_grad(a, b, np.full((3, 2), "x"))
    with pytest.raises(TypeError, match="share one dtype, got a: float64, b: float32"):
        matmul_grad(a, b.astype(np.float32), g)
    with pytest.raises(ValueError, match="transpose_a and adjoint_a cannot both be True"):
        matmul_grad(a.T, b, g, transpose_a=True, adjoint_a=True)
    with pytest.raises(ValueError, match=r"x must have rank 2 or more, got rank 1"):
        batch_matmul_grad(np.ones(3), np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match=r"batch shapes do not broadcast: x has shape \(2, 3, 4\)"):
        batch_matmul_grad(np.ones((2, 3, 4)), np.ones((3, 4, 2)), np.ones((2, 3, 2)))
    with pytest.raises(ValueError, match=r"grad must have the product's shape \(5, 3, 2\)"):
        batch_matmul_grad(np.ones((5, 3, 4)), np.ones((4, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="incompatible shapes"):
        tf_matmul_grad(a, np.ones((3, 2)), g)  # checked before TensorFlow runs


def test_fd_matmul_grad_makes_two_products_per_perturbed_entry(monkeypatch):
    # The docstring: central differences, so two products per entry (plus one at x).
    import matgrad.tf_matmul as tfm

    calls = []
    real_apply = tfm._apply_op

    def counting(x, transpose, adjoint):
        calls.append(1)
        return real_apply(x, transpose, adjoint)

    monkeypatch.setattr(tfm, "_apply_op", counting)
    a, b, g = np.ones((2, 3)), np.ones((3, 4)), np.ones((2, 4))
    tfm.fd_matmul_grad(a, b, g)
    products = len(calls) // 2  # _apply_op runs once per operand
    assert products == (2 * a.size + 1) + (2 * b.size + 1)

"""matgrad.jacobian: finite differences, closed forms, flattening, the chain rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.jacobian import (
    chain,
    flatten_jacobian,
    matmul_jacobian,
    numeric_hessian,
    numeric_jacobian,
)

dims = st.integers(1, 4)


def _rng(seed):
    return np.random.default_rng(seed)


@settings(max_examples=25, deadline=None)
@given(m=dims, k=dims, n=dims, seed=st.integers(0, 2**16))
def test_closed_forms_match_finite_differences(m, k, n, seed):
    rng = _rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    Ja = numeric_jacobian(lambda x: x @ b, a)
    Jb = numeric_jacobian(lambda x: a @ x, b)
    assert Ja.shape == (m, n, m, k) and Jb.shape == (m, n, k, n)
    np.testing.assert_allclose(matmul_jacobian(a, b, wrt="a"), Ja, atol=1e-8)
    np.testing.assert_allclose(matmul_jacobian(a, b, wrt="b"), Jb, atol=1e-8)


def test_numeric_jacobian_of_scalar_and_float32_input():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    J = numeric_jacobian(lambda t: (t**2).sum(), x)
    assert J.shape == (2, 2) and J.dtype == np.float64
    np.testing.assert_allclose(J, 2 * x, rtol=1e-8)


@settings(max_examples=25, deadline=None)
@given(m=dims, k=dims, n=dims, seed=st.integers(0, 2**16))
def test_kronecker_forms(m, k, n, seed):
    rng = _rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    Ja = matmul_jacobian(a, b, wrt="a")
    Jb = matmul_jacobian(a, b, wrt="b")
    # Row-major flattening (NumPy/TensorFlow reshape).
    np.testing.assert_array_equal(flatten_jacobian(Ja), np.kron(np.eye(m), b.T))
    np.testing.assert_array_equal(flatten_jacobian(Jb), np.kron(a, np.eye(n)))
    # Column-stacking vec: vec(A X B) = (B^T kron A) vec(X).
    np.testing.assert_array_equal(flatten_jacobian(Ja, order="F"), np.kron(b.T, np.eye(m)))
    np.testing.assert_array_equal(flatten_jacobian(Jb, order="F"), np.kron(np.eye(n), a))
    y = a @ b
    np.testing.assert_allclose(flatten_jacobian(Ja) @ a.ravel(), y.ravel())
    np.testing.assert_allclose(flatten_jacobian(Ja, order="F") @ a.ravel("F"), y.ravel("F"))


@settings(max_examples=20, deadline=None)
@given(m=dims, k=dims, n=dims, p=dims, seed=st.integers(0, 2**16))
def test_chain_equals_jacobian_of_composite(m, k, n, p, seed):
    rng = _rng(seed)
    t, b, c = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((n, p))
    inner = matmul_jacobian(t, b, wrt="a")  # dY/dT, Y = T B
    y = t @ b
    outer = numeric_jacobian(lambda y: np.tanh(y) @ c, y)  # dZ/dY, Z = tanh(Y) C
    composite = numeric_jacobian(lambda t: np.tanh(t @ b) @ c, t)
    np.testing.assert_allclose(chain(outer, inner), composite, atol=1e-7)
    # Flattened, the contraction is a matrix product.
    np.testing.assert_allclose(
        flatten_jacobian(chain(outer, inner)),
        flatten_jacobian(outer) @ flatten_jacobian(inner),
        atol=1e-12,
    )


def test_chain_with_scalar_output():
    rng = _rng(1)
    t, b = rng.standard_normal((3, 2)), rng.standard_normal((2, 4))
    y = t @ b
    dL_dY = numeric_jacobian(lambda y: (y**2).sum(), y)  # shape (3, 4)
    g = chain(dL_dY, matmul_jacobian(t, b, wrt="a"))
    assert g.shape == t.shape
    np.testing.assert_allclose(g, 2 * y @ b.T, rtol=1e-6)


def test_errors_name_the_argument_and_shapes():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    with pytest.raises(ValueError, match='wrt must be "a" or "b"'):
        matmul_jacobian(a, b, wrt="c")
    with pytest.raises(ValueError, match=r"a has shape \(2, 3\), b has shape \(2, 4\)"):
        matmul_jacobian(a, np.ones((2, 4)), wrt="a")
    with pytest.raises(ValueError, match=r"a must have rank 2, got rank 1 with shape \(3,\)"):
        matmul_jacobian(np.ones(3), b, wrt="a")
    with pytest.raises(TypeError, match="a must have a floating or complex dtype, got int64"):
        matmul_jacobian(np.ones((2, 3), dtype=np.int64), b, wrt="a")
    with pytest.raises(TypeError, match="f must be callable"):
        numeric_jacobian("not a function", a)
    with pytest.raises(TypeError, match="x must have a floating dtype, got int"):
        numeric_jacobian(lambda x: x, np.arange(3))
    with pytest.raises(ValueError, match="eps must be positive"):
        numeric_jacobian(lambda x: x, a, eps=0)
    with pytest.raises(
        ValueError, match=r"J_outer has shape \(5, 2, 3\).*J_inner has shape \(2, 4, 2, 3\)"
    ):
        chain(np.ones((5, 2, 3)), np.ones((2, 4, 2, 3)))
    with pytest.raises(ValueError, match="odd rank 3; pass out_ndim"):
        flatten_jacobian(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match='order must be "C" or "F"'):
        flatten_jacobian(np.ones((2, 2)), order="K")
    assert flatten_jacobian(np.ones((2, 3, 4)), out_ndim=1).shape == (2, 12)


# numeric_hessian ----------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**16))
def test_numeric_hessian_of_a_quadratic_is_exact(n, m, seed):
    # f(W) = 1/2 flat(W)^T A flat(W) + b^T flat(W): the Hessian is sym(A).
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n * m, n * m))
    b = rng.standard_normal(n * m)
    f = lambda w: 0.5 * w.ravel() @ A @ w.ravel() + b @ w.ravel()
    x = rng.standard_normal((n, m))
    H = numeric_hessian(f, x)
    assert H.shape == (n, m, n, m)
    # Exact up to rounding: each of the four values of f in an entry's second
    # difference is off by at most gamma_k T (k operations, T the sum of the
    # terms' sizes at the shifted points), and the difference is divided by
    # 4 h_i h_j (h as numeric_hessian chooses it).
    u = np.finfo(float).eps / 2
    h = np.finfo(float).eps ** 0.25 * np.maximum(1.0, np.abs(x.ravel()))
    w = np.abs(x.ravel()) + h
    T = 0.5 * w @ np.abs(A) @ w + np.abs(b) @ w
    k = (n * m) ** 2 + 3 * n * m + 2
    gamma = k * u / (1 - k * u)
    atol = 4 * gamma * T / (4 * h.min() ** 2)
    np.testing.assert_allclose(H.reshape(n * m, n * m), (A + A.T) / 2, rtol=0, atol=atol)


def test_numeric_hessian_is_symmetric_and_matches_a_known_hessian():
    # f(x) = sum(sin(x) * x^2) has a diagonal Hessian 2 sin x + 4 x cos x - x^2 sin x.
    x = np.array([[0.3, -1.2], [2.0, 0.7]])
    H = numeric_hessian(lambda t: np.sum(np.sin(t) * t**2), x)
    flat = H.reshape(4, 4)
    np.testing.assert_array_equal(flat, flat.T)
    exact = 2 * np.sin(x) + 4 * x * np.cos(x) - x**2 * np.sin(x)
    np.testing.assert_allclose(np.diag(flat), exact.ravel(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(flat - np.diag(np.diag(flat)), 0, atol=1e-7)


def test_numeric_hessian_accepts_float32_and_returns_float64():
    H = numeric_hessian(lambda t: float(np.sum(t**2)), np.ones(3, np.float32))
    assert H.dtype == np.float64
    np.testing.assert_allclose(H, 2 * np.eye(3), atol=1e-6)


def test_numeric_hessian_errors_name_the_argument_and_shapes():
    with pytest.raises(TypeError, match="f must be callable"):
        numeric_hessian("not a function", np.ones(2))
    with pytest.raises(
        TypeError, match=r"x must have a floating dtype, got int64 with shape \(3,\)"
    ):
        numeric_hessian(lambda t: t.sum(), np.arange(3))
    with pytest.raises(ValueError, match=r"f must return a scalar.*shape \(2,\).*shape \(2,\)"):
        numeric_hessian(lambda t: t * 2, np.ones(2))
    with pytest.raises(ValueError, match="eps must be positive"):
        numeric_hessian(lambda t: t.sum(), np.ones(2), eps=-1)


def test_numeric_hessian_call_count_is_2n_n_plus_1_plus_1():
    # The docstring's count: four calls per pair k >= i, plus one scalar check.
    calls = []
    for n in (1, 2, 5):
        calls.clear()
        numeric_hessian(lambda t: calls.append(1) or float(np.sum(t**2)), np.ones(n))
        assert len(calls) == 2 * n * (n + 1) + 1

"""matgrad.symbolic: symbol matrices, rank-4 Jacobians, numeric evaluation."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.examples import EXPECTED_SEED_GRAD_ROW, SEED_B, SEED_T
from matgrad.jacobian import numeric_jacobian
from matgrad.symbolic import jacobian_tensor, symbol_matrix, to_numpy

dims = st.integers(1, 3)


def test_symbol_matrix_names_and_shape():
    T = symbol_matrix("t", (2, 3))
    assert T.shape == (2, 3)
    assert str(T[1, 2]) == "t_12"
    assert len(set(T)) == 6
    assert all(s.is_real for s in T)


def test_symbol_matrix_large_shapes_stay_unambiguous():
    T = symbol_matrix("t", (11, 2))
    assert str(T[10, 1]) == "t_10,1"
    assert len(set(T)) == 22


@pytest.mark.parametrize(
    "name, shape, exc",
    [
        ("1t", (2, 2), TypeError),
        (3, (2, 2), TypeError),
        ("t", (2, 0), ValueError),
        ("t", (2, 2, 2), ValueError),
        ("t", "ab", TypeError),
    ],
)
def test_symbol_matrix_rejects_bad_input(name, shape, exc):
    with pytest.raises(exc):
        symbol_matrix(name, shape)


@settings(max_examples=15, deadline=None)
@given(m=dims, k=dims, n=dims)
def test_matmul_jacobian_entry_rule(m, k, n):
    T, B = symbol_matrix("t", (m, k)), symbol_matrix("b", (k, n))
    J = jacobian_tensor(T * B, T)
    assert J.shape == (m, n, m, k)
    for i, j, p, q in np.ndindex(m, n, m, k):
        assert J[i, j, p, q] == (B[q, j] if i == p else 0)


def test_order_differs_from_derive_by_array():
    T, B = symbol_matrix("t", (2, 3)), symbol_matrix("b", (3, 2))
    Y = T * B
    D = sp.derive_by_array(Y, T)
    J = jacobian_tensor(Y, T)
    assert D.shape == (2, 3, 2, 2) and J.shape == (2, 2, 2, 3)
    assert J == sp.permutedims(D, (2, 3, 0, 1))


def test_scalar_and_vector_cases():
    x = symbol_matrix("x", (3, 1))
    f = (x.T * x)[0, 0]
    g = jacobian_tensor(f, x)
    assert g.shape == (3, 1) and g[1, 0] == 2 * x[1, 0]


@settings(max_examples=10, deadline=None)
@given(m=dims, k=dims, seed=st.integers(0, 2**16))
def test_agrees_with_finite_differences(m, k, seed):
    rng = np.random.default_rng(seed)
    T = symbol_matrix("t", (m, k))
    Y = T.applyfunc(lambda e: e**2) + T.T.T.applyfunc(sp.sin)
    t0 = rng.standard_normal((m, k))
    exact = to_numpy(jacobian_tensor(Y, T), {T: t0})
    approx = numeric_jacobian(lambda t: t**2 + np.sin(t), t0)
    np.testing.assert_allclose(exact, approx, atol=1e-7)


def test_seed_rows_from_sympy():
    T, B = symbol_matrix("t", (5, 3)), symbol_matrix("b", (3, 3))
    J = to_numpy(jacobian_tensor(T * B, T), {T: SEED_T, B: SEED_B})
    rows = J.sum(axis=(0, 1))
    # float64 sums of the float32 inputs; TensorFlow's float32 sums are within 1e-6.
    np.testing.assert_allclose(rows, np.tile(EXPECTED_SEED_GRAD_ROW, (5, 1)), rtol=1e-6)


def test_to_numpy_accepts_pairs_and_single_symbols():
    x, y = sp.symbols("x y")
    M = sp.Matrix([[x, y]])
    out = to_numpy(M * 2, [(x, 1.5), (y, -2.0)])
    np.testing.assert_array_equal(out, [[3.0, -4.0]])
    assert to_numpy(x * y, {x: 2.0, y: 3.0}).shape == ()


def test_bad_inputs_raise_clear_errors():
    T = symbol_matrix("t", (2, 2))
    with pytest.raises(TypeError, match="Y must be"):
        jacobian_tensor([[1, 2]], T)
    with pytest.raises(TypeError, match="X must be"):
        jacobian_tensor(T, [[1, 2]])
    with pytest.raises(TypeError, match=r"X must hold only symbols, but X\[0, 1\]"):
        jacobian_tensor(T, sp.Matrix([[T[0, 0], 2 * T[0, 1]]]))
    with pytest.raises(ValueError, match="distinct"):
        jacobian_tensor(T, sp.Matrix([[T[0, 0], T[0, 0]]]))
    with pytest.raises(ValueError, match=r"shape \(2, 2\) was given a value of shape \(3, 2\)"):
        to_numpy(T, {T: np.zeros((3, 2))})
    with pytest.raises(ValueError, match="without a value: t_11"):
        to_numpy(T, {T[0, 0]: 1.0, T[0, 1]: 1.0, T[1, 0]: 1.0})
    with pytest.raises(TypeError, match="subs must be"):
        to_numpy(T, "t=1")


def test_imports_no_tensorflow():
    code = (
        "import sys, matgrad.symbolic, matgrad.jacobian, matgrad.vjp, matgrad.tape, "
        "matgrad.examples, matgrad.timing; "
        "sys.exit('tensorflow' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0

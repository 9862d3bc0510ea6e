"""matgrad.vjp: VJPs and JVPs from Jacobians, and Jacobians rebuilt from them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.jacobian import matmul_jacobian, numeric_jacobian
from matgrad.vjp import jacobian_from_jvps, jacobian_from_vjps, jvp_from_jacobian, vjp_from_jacobian

dims = st.integers(1, 4)


@settings(max_examples=25, deadline=None)
@given(m=dims, k=dims, n=dims, seed=st.integers(0, 2**16))
def test_matmul_vjp_and_jvp_rules(m, k, n, seed):
    rng = np.random.default_rng(seed)
    t, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    v, u = rng.standard_normal((m, n)), rng.standard_normal((m, k))
    J = matmul_jacobian(t, b, wrt="a")
    np.testing.assert_allclose(vjp_from_jacobian(J, v), v @ b.T, atol=1e-12)
    np.testing.assert_allclose(jvp_from_jacobian(J, u), u @ b, atol=1e-12)
    # <v, J u> == <J^T v, u>
    np.testing.assert_allclose(
        np.sum(v * jvp_from_jacobian(J, u)), np.sum(vjp_from_jacobian(J, v) * u), atol=1e-10
    )


@settings(max_examples=20, deadline=None)
@given(m=dims, k=dims, n=dims, seed=st.integers(0, 2**16))
def test_rebuilding_the_jacobian(m, k, n, seed):
    rng = np.random.default_rng(seed)
    t, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    J = matmul_jacobian(t, b, wrt="a")
    np.testing.assert_array_equal(jacobian_from_vjps(lambda v: v @ b.T, (m, n)), J)
    np.testing.assert_array_equal(jacobian_from_jvps(lambda u: u @ b, (m, k)), J)


def test_rebuilding_a_nonlinear_jacobian():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3))
    f = lambda x: np.tanh(x) * x.sum()
    J = numeric_jacobian(f, x)
    jvp = lambda u: jvp_from_jacobian(J, u)
    vjp = lambda v: vjp_from_jacobian(J, v)
    np.testing.assert_allclose(jacobian_from_jvps(jvp, x.shape), J, atol=1e-12)
    np.testing.assert_allclose(jacobian_from_vjps(vjp, (2, 3)), J, atol=1e-12)


def test_scalar_output_vjp():
    J = np.arange(6.0).reshape(2, 3)  # Jacobian of a scalar w.r.t. (2, 3)
    np.testing.assert_array_equal(vjp_from_jacobian(J, np.float64(2.0)), 2 * J)


def test_errors_name_the_shapes():
    J = np.zeros((5, 3, 5, 3))
    with pytest.raises(ValueError, match=r"v has shape \(3, 5\), J has shape \(5, 3, 5, 3\)"):
        vjp_from_jacobian(J, np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"u has shape \(4,\), J has shape"):
        jvp_from_jacobian(J, np.zeros(4))
    with pytest.raises(TypeError, match="v must have a floating or complex dtype, got int64"):
        vjp_from_jacobian(J, np.zeros((5, 3), dtype=np.int64))
    with pytest.raises(TypeError, match="vjp_fn must be callable"):
        jacobian_from_vjps(None, (2, 2))
    with pytest.raises(ValueError, match="out_shape must contain positive ints"):
        jacobian_from_vjps(lambda v: v, (2, 0))
    sizes = iter([3, 4])
    with pytest.raises(ValueError, match=r"vjp_fn returned shapes \(3,\) and \(4,\)"):
        jacobian_from_vjps(lambda v: np.zeros(next(sizes)), (2,))


def test_vjp_from_jacobian_does_not_conjugate():
    # Complex: the plain transpose v^T J; TensorFlow's adjoint is conj(vjp(J, conj v)).
    rng = np.random.default_rng(3)
    t = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    b = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    g = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    J = matmul_jacobian(t, b, wrt="a")
    np.testing.assert_allclose(vjp_from_jacobian(J, g), g @ b.T, rtol=1e-12)
    np.testing.assert_allclose(
        np.conj(vjp_from_jacobian(J, np.conj(g))), g @ b.conj().T, rtol=1e-12
    )


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_the_glossarys_adjoints_under_the_real_inner_product(seed):
    # appendix/glossary.md, "adjoint": Re<V, f(U)> = Re<f*(V), U> with
    # Re<A, B> = Re tr(A^H B); dT -> dT B has adjoint V -> V B^H, and conj
    # (real-linear, no complex matrix) has adjoint V -> conj(V).
    rng = np.random.default_rng(seed)
    cplx = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)
    re_inner = lambda a, b: np.real(np.vdot(a, b))
    U, V, B = cplx(2, 3), cplx(2, 4), cplx(3, 4)
    np.testing.assert_allclose(re_inner(V, U @ B), re_inner(V @ B.conj().T, U), rtol=1e-12)
    U, V = cplx(2, 3), cplx(2, 3)
    np.testing.assert_allclose(re_inner(V, U.conj()), re_inner(V.conj(), U), rtol=1e-12)
    # under the complex inner product itself conj has no adjoint: <V, conj U> is
    # not linear in U, so no W gives <W, U> for every U (i U breaks it)
    assert not np.isclose(np.vdot(V, (1j * U).conj()), 1j * np.vdot(V, U.conj()))

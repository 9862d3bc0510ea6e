"""matgrad.tf_matmul.matmul_grad against JAX's reverse mode (jax.vjp).

The conventions differ for complex arrays, and the test maps one onto the
other. TensorFlow's upstream gradient G stands for the real loss Re<G, Y>,
and its gradient is dL/dX + i dL/dW; JAX's pullback applies the plain
transpose of the linear map, with no conjugation. For Y = op_a(A) op_b(B)
the two are related by

    matmul_grad(A, B, G) == conj(pullback(conj(G)))

(for real arrays both conjugations do nothing). Every transpose/adjoint
combination and four dtypes are drawn by hypothesis.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings

from matgrad.tf_matmul import matmul_grad
from test_tf_matmul import _tol, matmul_cases

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)  # float64 and complex128
jnp = jax.numpy

OPS = {"plain": lambda x: x, "transpose": lambda x: x.T, "adjoint": lambda x: x.conj().T}


@settings(max_examples=60, deadline=None)
@given(matmul_cases())
def test_matmul_grad_matches_jax_vjp(case):
    a, b, g, flags = case
    mode_a, mode_b = (
        next((m for m in ("transpose", "adjoint") if flags[f"{m}_{s}"]), "plain") for s in "ab"
    )
    product = lambda x, y: OPS[mode_a](x) @ OPS[mode_b](y)
    out, pullback = jax.vjp(product, jnp.asarray(a), jnp.asarray(b))
    assert out.dtype == a.dtype and out.shape == g.shape
    want_a, want_b = (np.conj(np.asarray(t)) for t in pullback(np.conj(g)))
    got_a, got_b = matmul_grad(a, b, g, **flags)
    np.testing.assert_allclose(got_a, want_a, **_tol(a.dtype))
    np.testing.assert_allclose(got_b, want_b, **_tol(a.dtype))


def test_jax_grad_is_the_conjugate_of_tensorflows_convention():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    loss = lambda x: jnp.sum(jnp.abs(x @ b) ** 2)
    ours, _ = matmul_grad(a, b, 2 * (a @ b))  # dL/dP = 2P, TF's convention
    np.testing.assert_allclose(np.conj(jax.grad(loss)(a)), ours, rtol=1e-12)


def test_jax_grad_refuses_a_non_scalar_output():
    with pytest.raises(TypeError, match="scalar"):
        jax.grad(lambda x: x @ x)(jnp.ones((2, 2)))

"""Vector-Jacobian and Jacobian-vector products, and Jacobians rebuilt from them.

A VJP contracts an upstream array ``v`` (shaped like the output) with the
output axes of a Jacobian; a JVP contracts a tangent ``u`` (shaped like the
input) with its input axes.  Reverse mode computes VJPs, forward mode JVPs;
neither needs the Jacobian itself, and the last two functions here rebuild the
Jacobian from either, one basis vector at a time.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array, as_shape, check_callable


def vjp_from_jacobian(J, v) -> np.ndarray:
    """``v^T J``: contract ``v`` (shape S) with the leading S axes of ``J`` (S + R).

    Nothing is conjugated.  For real arrays this is TensorFlow's VJP.  For
    complex arrays it is the plain transpose (what JAX's pullback applies), not
    TensorFlow's gradient: for a holomorphic op TensorFlow returns the adjoint
    ``J^H v``, which is ``conj(vjp_from_jacobian(J, conj(v)))``.
    """
    J = np.asarray(J)
    v = as_array(v, "v")
    if v.ndim > J.ndim or J.shape[: v.ndim] != v.shape:
        raise ValueError(
            f"v must have the shape of the output axes of J: v has shape {v.shape}, "
            f"J has shape {J.shape}"
        )
    return np.tensordot(v, J, axes=v.ndim)


def jvp_from_jacobian(J, u) -> np.ndarray:
    """``J u``: contract ``u`` (shape R) with the trailing R axes of ``J`` (S + R)."""
    J = np.asarray(J)
    u = as_array(u, "u")
    if u.ndim > J.ndim or J.shape[J.ndim - u.ndim :] != u.shape:
        raise ValueError(
            f"u must have the shape of the input axes of J: u has shape {u.shape}, "
            f"J has shape {J.shape}"
        )
    return np.tensordot(J, u, axes=u.ndim)


def _one_hots(shape, dtype):
    for idx in np.ndindex(*shape):
        e = np.zeros(shape, dtype=dtype)
        e[idx] = 1
        yield e


def _on_basis(fn, fn_name: str, shape, shape_name: str, dtype):
    """Call ``fn`` on every one-hot array of ``shape``; the results must agree in shape."""
    check_callable(fn, fn_name)
    shape = as_shape(shape, shape_name)
    results = [np.asarray(fn(e)) for e in _one_hots(shape, dtype)]
    for r in results[1:]:
        if r.shape != results[0].shape:
            raise ValueError(
                f"{fn_name} returned shapes {results[0].shape} and {r.shape}; they must agree"
            )
    return shape, results


def jacobian_from_vjps(vjp_fn, out_shape, dtype=np.float64) -> np.ndarray:
    """Rebuild a Jacobian from a VJP function: one call per output entry.

    ``vjp_fn(v)`` must return ``v^T J`` (shape R) for ``v`` of shape
    ``out_shape``; the one-hot ``v`` for output entry ``idx`` gives the slice
    ``J[idx]``.  Returns shape ``out_shape + R``.
    """
    out_shape, rows = _on_basis(vjp_fn, "vjp_fn", out_shape, "out_shape", dtype)
    return np.stack(rows).reshape(out_shape + rows[0].shape)


def jacobian_from_jvps(jvp_fn, in_shape, dtype=np.float64) -> np.ndarray:
    """Rebuild a Jacobian from a JVP function: one call per input entry.

    ``jvp_fn(u)`` must return ``J u`` (shape S) for ``u`` of shape
    ``in_shape``; the one-hot ``u`` for input entry ``idx`` gives the slice
    ``J[..., idx]``.  Returns shape ``S + in_shape``.
    """
    in_shape, cols = _on_basis(jvp_fn, "jvp_fn", in_shape, "in_shape", dtype)
    return np.stack(cols, axis=-1).reshape(cols[0].shape + in_shape)

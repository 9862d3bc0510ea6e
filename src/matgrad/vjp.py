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
    """``v^T J``: contract ``v`` (shape S) with the leading S axes of ``J`` (S + R)."""
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


def jacobian_from_vjps(vjp_fn, out_shape, dtype=np.float64) -> np.ndarray:
    """Rebuild a Jacobian from a VJP function: one call per output entry.

    ``vjp_fn(v)`` must return ``v^T J`` (shape R) for ``v`` of shape
    ``out_shape``; the one-hot ``v`` for output entry ``idx`` gives the slice
    ``J[idx]``.  Returns shape ``out_shape + R``.
    """
    check_callable(vjp_fn, "vjp_fn")
    out_shape = as_shape(out_shape, "out_shape")
    rows = [np.asarray(vjp_fn(e)) for e in _one_hots(out_shape, dtype)]
    in_shape = rows[0].shape
    for r in rows:
        if r.shape != in_shape:
            raise ValueError(f"vjp_fn returned shapes {in_shape} and {r.shape}; they must agree")
    return np.stack(rows).reshape(out_shape + in_shape)


def jacobian_from_jvps(jvp_fn, in_shape, dtype=np.float64) -> np.ndarray:
    """Rebuild a Jacobian from a JVP function: one call per input entry.

    ``jvp_fn(u)`` must return ``J u`` (shape S) for ``u`` of shape
    ``in_shape``; the one-hot ``u`` for input entry ``idx`` gives the slice
    ``J[..., idx]``.  Returns shape ``S + in_shape``.
    """
    check_callable(jvp_fn, "jvp_fn")
    in_shape = as_shape(in_shape, "in_shape")
    cols = [np.asarray(jvp_fn(e)) for e in _one_hots(in_shape, dtype)]
    out_shape = cols[0].shape
    for c in cols:
        if c.shape != out_shape:
            raise ValueError(f"jvp_fn returned shapes {out_shape} and {c.shape}; they must agree")
    return np.stack(cols, axis=-1).reshape(out_shape + in_shape)

"""Jacobians of matrix functions as NumPy arrays.

Shapes follow the book's convention: the Jacobian of an output of shape S with
respect to an input of shape R has shape ``S + R``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_array, check_callable, check_ndim


def _difference_setup(f, x, eps, root: int):
    """Check the inputs of a finite-difference helper; x as float64 and the step.

    The default step is float64's machine epsilon to the power ``1/root``:
    ``root=3`` for a central first difference, ``root=4`` for a second one.
    """
    check_callable(f, "f")
    x = as_array(x, "x", allow_complex=False).astype(np.float64)
    if eps is None:
        eps = np.finfo(np.float64).eps ** (1 / root)
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps}")
    return x, eps


def numeric_jacobian(f, x, eps=None) -> np.ndarray:
    """Central-difference Jacobian of ``f`` at ``x``, in float64.

    ``f`` maps an array shaped like ``x`` to an array (or scalar); the result
    has shape ``f(x).shape + x.shape``.  Each input entry is nudged by
    ``eps * max(1, |x|)`` both ways (``eps`` defaults to the cube root of
    float64's machine epsilon, about 6e-6, which balances truncation against
    round-off for central differences).
    """
    x, eps = _difference_setup(f, x, eps, root=3)
    y0 = np.asarray(f(x.copy()), dtype=np.float64)
    J = np.empty(y0.shape + x.shape, dtype=np.float64)
    for idx in np.ndindex(*x.shape):
        h = eps * max(1.0, abs(x[idx]))
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        diff = np.asarray(f(xp), dtype=np.float64) - np.asarray(f(xm), dtype=np.float64)
        if diff.shape != y0.shape:
            raise ValueError(f"f returned shape {diff.shape} after a nudge but {y0.shape} at x")
        J[(Ellipsis,) + idx] = diff / (2 * h)
    return J


def numeric_hessian(f, x, eps=None) -> np.ndarray:
    """Central-difference Hessian of a scalar ``f`` at ``x``, in float64.

    The result has shape ``x.shape + x.shape``: entry ``[i..., k...]`` is
    d^2 f / dx[i...] dx[k...].  Each pair of entries is nudged by
    ``h_i = eps * max(1, |x_i|)`` in the four sign combinations,

        (f(+h_i, +h_k) - f(+h_i, -h_k) - f(-h_i, +h_k) + f(-h_i, -h_k)) / (4 h_i h_k),

    which is exact for quadratics up to round-off.  ``eps`` defaults to the
    fourth root of float64's machine epsilon (about 1.2e-4), which balances
    truncation against round-off for a second difference.  The result is
    symmetrised (the formula gives the same value for (i, k) and (k, i) up to
    round-off).  Only the pairs with ``k >= i`` are evaluated, so for
    ``N = x.size`` ``f`` is called ``2 * N * (N + 1) + 1`` times (four per pair,
    plus one call that checks the output is a scalar).
    """
    x, eps = _difference_setup(f, x, eps, root=4)
    y0 = np.asarray(f(x.copy()))
    if y0.shape != ():
        raise ValueError(
            f"f must return a scalar for numeric_hessian, got shape {y0.shape} "
            f"at x of shape {x.shape}"
        )
    flat = x.reshape(-1)
    h = eps * np.maximum(1.0, np.abs(flat))
    n = flat.size

    def at(i, si, k, sk):
        z = flat.copy()
        z[i] += si * h[i]
        z[k] += sk * h[k]
        return float(np.asarray(f(z.reshape(x.shape)), dtype=np.float64))

    H = np.empty((n, n))
    for i in range(n):
        for k in range(i, n):
            second = (at(i, 1, k, 1) - at(i, 1, k, -1) - at(i, -1, k, 1) + at(i, -1, k, -1)) / (
                4 * h[i] * h[k]
            )
            H[i, k] = H[k, i] = second
    return H.reshape(x.shape + x.shape)


def _matmul_operands(a, b):
    a = as_array(a, "a")
    b = as_array(b, "b")
    check_ndim(a, "a", 2)
    check_ndim(b, "b", 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"a and b cannot be multiplied: a has shape {a.shape}, b has shape {b.shape} "
            f"(a's columns {a.shape[1]} != b's rows {b.shape[0]})"
        )
    return a, b


def matmul_jacobian(a, b, wrt: str) -> np.ndarray:
    """Closed-form Jacobian of ``Y = a @ b`` with respect to ``a`` or ``b``.

    ``wrt="a"``: ``J[i, j, k, l] = delta(i, k) * b[l, j]``, shape ``(m, n, m, p)``.
    ``wrt="b"``: ``J[i, j, k, l] = a[i, k] * delta(j, l)``, shape ``(m, n, p, n)``.
    """
    if wrt not in ("a", "b"):
        raise ValueError(f'wrt must be "a" or "b", got {wrt!r}')
    a, b = _matmul_operands(a, b)
    m, n = a.shape[0], b.shape[1]
    if wrt == "a":
        return np.einsum("ik,lj->ijkl", np.eye(m, dtype=b.dtype), b)
    return np.einsum("ik,jl->ijkl", a, np.eye(n, dtype=a.dtype))


def _split(ndim: int, given, name: str, what: str) -> int:
    if given is None:
        if ndim % 2:
            raise ValueError(
                f"{name} has odd rank {ndim}; pass {what} to say how many axes belong to the output"
            )
        return ndim // 2
    given = int(given)
    if not 0 <= given <= ndim:
        raise ValueError(f"{what} must be between 0 and {name}.ndim = {ndim}, got {given}")
    return given


def flatten_jacobian(J, out_ndim=None, order: str = "C") -> np.ndarray:
    """Flatten a Jacobian array of shape ``S + R`` to a ``prod(S) x prod(R)`` matrix.

    ``order="C"`` flattens row-major, as ``reshape`` does in NumPy and
    TensorFlow.  ``order="F"`` is the textbook ``vec``, which stacks columns;
    with it ``vec(A X B) = (B^T kron A) vec(X)`` holds.  ``out_ndim`` is the
    number of leading (output) axes and defaults to half of ``J.ndim``.
    """
    J = np.asarray(J)
    if order not in ("C", "F"):
        raise ValueError(f'order must be "C" or "F", got {order!r}')
    k = _split(J.ndim, out_ndim, "J", "out_ndim")
    out_shape, in_shape = J.shape[:k], J.shape[k:]
    if order == "F":
        # Column-stacking = row-major flattening of the axes in reverse order.
        axes = tuple(reversed(range(k))) + tuple(reversed(range(k, J.ndim)))
        J = J.transpose(axes)
    return J.reshape(math.prod(out_shape), math.prod(in_shape))


def chain(J_outer, J_inner, mid_ndim=None) -> np.ndarray:
    """The chain rule for Jacobian arrays.

    ``J_outer`` has shape ``Z.shape + Y.shape`` and ``J_inner`` has shape
    ``Y.shape + X.shape``; the result, shape ``Z.shape + X.shape``, contracts
    the intermediate ``Y`` axes: ``dZ/dX = sum over y of dZ/dy * dy/dX``.
    ``mid_ndim`` (the rank of Y) defaults to half of ``J_inner.ndim``.
    """
    J_outer = np.asarray(J_outer)
    J_inner = np.asarray(J_inner)
    k = _split(J_inner.ndim, mid_ndim, "J_inner", "mid_ndim")
    mid_outer = J_outer.shape[J_outer.ndim - k :] if k else ()
    mid_inner = J_inner.shape[:k]
    if k > J_outer.ndim or mid_outer != mid_inner:
        raise ValueError(
            f"the intermediate axes do not match: J_outer has shape {J_outer.shape} "
            f"(last {k} axes {mid_outer}), J_inner has shape {J_inner.shape} "
            f"(first {k} axes {mid_inner})"
        )
    return np.tensordot(J_outer, J_inner, axes=k)

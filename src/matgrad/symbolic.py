"""Symbolic derivatives of matrix expressions with SymPy.

The convention of the whole book: the derivative of an output of shape S with
respect to an input of shape R is an array of shape ``S + R`` (the order of
TensorFlow's ``tape.jacobian``).  SymPy's own ``derive_by_array(Y, X)``
returns ``R + S``; :func:`jacobian_tensor` puts the axes in the book's order.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ._checks import as_shape

_MatrixLike = (sp.MatrixBase, sp.NDimArray)


def symbol_matrix(name: str, shape) -> sp.ImmutableMatrix:
    """A matrix of distinct real symbols named ``{name}_{i}{j}``.

    The matrix is immutable, so it can be a key of the ``subs`` dict of
    :func:`to_numpy`.

    >>> symbol_matrix("t", (2, 3))
    Matrix([
    [t_00, t_01, t_02],
    [t_10, t_11, t_12]])
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise TypeError(f"name must be an identifier string such as 't', got {name!r}")
    shape = as_shape(shape, "shape")
    if len(shape) != 2:
        raise ValueError(f"shape must have two entries (rows, columns), got {shape}")
    rows, cols = shape
    sep = "," if max(rows, cols) > 10 else ""
    return sp.ImmutableMatrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{sep}{j}", real=True))


def _entries(A: sp.Array) -> list:
    """The entries of an array in row-major order (rank 0 included)."""
    return [A[idx] for idx in np.ndindex(*A.shape)] if A.rank() else [A[()]]


def _as_array(expr, name: str) -> sp.Array:
    if isinstance(expr, _MatrixLike):
        return sp.Array(expr)
    if isinstance(expr, sp.Basic):
        return sp.Array(expr)  # a scalar: rank-0 array
    raise TypeError(
        f"{name} must be a SymPy Matrix, Array or expression, got {type(expr).__name__}"
    )


def jacobian_tensor(Y, X) -> sp.Array:
    """All partial derivatives of ``Y`` with respect to ``X``.

    Returns a :class:`sympy.Array` of shape ``Y.shape + X.shape`` whose entry
    ``[i, j, k, l]`` is ``dY[i, j] / dX[k, l]``.  ``X`` must hold distinct
    symbols; ``Y`` may be a matrix, an array or a scalar expression.
    """
    Ya = _as_array(Y, "Y")
    if not isinstance(X, _MatrixLike):
        raise TypeError(f"X must be a SymPy Matrix or Array of symbols, got {type(X).__name__}")
    Xa = sp.Array(X)
    flat_x = _entries(Xa)
    for idx, entry in zip(np.ndindex(*Xa.shape), flat_x, strict=True):
        if not isinstance(entry, sp.Symbol):
            raise TypeError(
                f"X must hold only symbols, but X{list(idx)} = {entry} "
                f"(X has shape {tuple(Xa.shape)})"
            )
    if len(set(flat_x)) != len(flat_x):
        raise ValueError(f"X must hold distinct symbols (X has shape {tuple(Xa.shape)})")
    # derive_by_array returns X.shape + Y.shape; move Y's axes to the front.
    D = sp.derive_by_array(Ya, Xa)
    rx, ry = Xa.rank(), Ya.rank()
    return sp.permutedims(D, tuple(range(rx, rx + ry)) + tuple(range(rx)))


def to_numpy(expr, subs) -> np.ndarray:
    """Evaluate a symbolic scalar, matrix or array at numbers, as float64.

    ``subs`` maps symbol matrices to arrays of the same shape (and/or single
    symbols to numbers): ``to_numpy(J, {T: SEED_T, B: SEED_B})``.  A list of
    ``(key, value)`` pairs works too (for mutable matrices, which cannot be
    dict keys).
    """
    if isinstance(subs, dict):
        pairs = list(subs.items())
    elif isinstance(subs, (list, tuple)) and all(
        isinstance(p, tuple) and len(p) == 2 for p in subs
    ):
        pairs = list(subs)
    else:
        raise TypeError(
            f"subs must be a dict or a list of (key, value) pairs, got {type(subs).__name__}"
        )
    values: dict[sp.Symbol, float] = {}
    for key, val in pairs:
        if isinstance(key, sp.Symbol):
            values[key] = val
            continue
        if not isinstance(key, _MatrixLike):
            raise TypeError(
                f"subs keys must be symbols or symbol matrices, got {type(key).__name__}"
            )
        arr = np.asarray(val)
        key_shape = tuple(sp.Array(key).shape)
        if arr.shape != key_shape:
            raise ValueError(
                f"subs: a symbol matrix of shape {key_shape} was given a value of shape {arr.shape}"
            )
        for sym, v in zip(_entries(sp.Array(key)), arr.ravel(), strict=True):
            values[sym] = v
    A = _as_array(expr, "expr")
    entries = _entries(A)
    # float(v) is exact for float32 and float64 inputs; 17 digits keep it so.
    exact = {s: sp.Float(float(v), 17) for s, v in values.items()}
    out = []
    for e in entries:
        e = sp.sympify(e).xreplace(exact)
        left = e.free_symbols
        if left:
            names = ", ".join(sorted(str(s) for s in left)[:5])
            raise ValueError(f"subs leaves symbols without a value: {names}")
        out.append(float(e))
    return np.array(out, dtype=np.float64).reshape(tuple(A.shape))

"""Gradient rules of TensorFlow's linear-algebra operations, in NumPy.

Each function is the vector-Jacobian product that TensorFlow's registered
gradient computes (or should compute), in TensorFlow's convention: an
upstream gradient ``grad`` stands for the real loss ``L = Re<grad, Y>`` with
``<A, B> = sum(conj(A) * B)``, and the returned array is
``dL/dRe(x) + 1j * dL/dIm(x)`` (the same convention as
:func:`matgrad.tf_matmul.matmul_grad`).  For real arrays every ``conj`` does
nothing.

- ``bias_add_grad``: ``BiasAdd`` (bias input), the sum of ``grad`` over every
  axis but the bias axis;
- ``inverse_grad``: ``MatrixInverse``, ``-A^-H G A^-H``;
- ``det_grad``: ``MatrixDeterminant``, ``G conj(det A) A^-H = G adj(A)^H``;
- ``det_grad_as_registered``: TensorFlow's registered rule as it is,
  ``G det(A) A^-H`` (wrong for complex ``A``);
- ``logdet_grad``: ``LogMatrixDeterminant``, ``Re(G) A^-H`` (the gradient of
  ``log|det A|``);
- ``einsum_grad``: ``Einsum``, the einsum of ``G`` with the other
  (conjugated) operands;
- ``cholesky_grad``: ``Cholesky``, ``sym(L^-H Phi(L^H G) L^-1)``;
- ``adjugate``: ``adj(A)``, also for singular ``A``.

The matrix functions take batches (leading axes) as TensorFlow's ops do.
No TensorFlow is imported here.
"""

from __future__ import annotations

import string

import numpy as np

from ._checks import as_array, check_same_dtype, check_shape, check_square

__all__ = [
    "bias_add_grad",
    "inverse_grad",
    "det_grad",
    "det_grad_as_registered",
    "logdet_grad",
    "einsum_grad",
    "cholesky_grad",
    "adjugate",
]


def _H(x: np.ndarray) -> np.ndarray:
    """Conjugate transpose of the last two axes."""
    return np.conj(np.swapaxes(x, -1, -2))


def _matrix_and_grad(a, grad, a_name: str, grad_shape_of):
    """Check a (batch of) square matrices and its upstream gradient."""
    a = as_array(a, a_name)
    check_square(a, a_name)
    grad = as_array(grad, "grad")
    check_same_dtype(**{a_name: a, "grad": grad})
    check_shape(
        grad,
        "grad",
        grad_shape_of(a.shape),
        f"the op's output shape for {a_name} of shape {a.shape}",
    )
    return a, grad


def bias_add_grad(grad, *, data_format: str = "NHWC"):
    """Gradient of ``tf.nn.bias_add(value, bias)`` with respect to ``bias``.

    The bias is added along the last axis (``data_format="NHWC"``) or axis 1
    (``"NCHW"``) of every example, so its gradient sums ``grad`` over every
    other axis: "broadcast forward, sum backward".  (The gradient with respect
    to ``value`` is ``grad`` itself.)
    """
    grad = as_array(grad, "grad")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f'data_format must be "NHWC" or "NCHW", got {data_format!r}')
    if grad.ndim < 2:
        raise ValueError(
            f"grad must have rank 2 or more (a batch of examples), "
            f"got rank {grad.ndim} with shape {grad.shape}"
        )
    keep = grad.ndim - 1 if data_format == "NHWC" else 1
    return grad.sum(axis=tuple(i for i in range(grad.ndim) if i != keep))


def inverse_grad(a, grad):
    """Gradient of ``tf.linalg.inv(a)``: ``-A^-H G A^-H``.

    From ``d(A^-1) = -A^-1 dA A^-1``.  TensorFlow's rule reads the op's output
    ``A^-1`` instead of inverting again; this function inverts ``a``.
    """
    a, grad = _matrix_and_grad(a, grad, "a", lambda s: s)
    inv_h = _H(np.linalg.inv(a))
    return -(inv_h @ grad @ inv_h)


def adjugate(a):
    """The adjugate ``adj(A)`` (transposed cofactor matrix), batched; defined for singular ``a``.

    For invertible ``A`` it is ``det(A) A^-1``.  Computed from the SVD
    ``A = U diag(s) V^H`` as ``det(U) det(V^H) V diag(p) U^H`` with
    ``p_i`` the product of all singular values but ``s_i`` (no division,
    so a zero singular value is harmless).
    """
    a = as_array(a, "a")
    check_square(a, "a")
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    left = np.concatenate([ones, np.cumprod(s[..., :-1], axis=-1)], axis=-1)
    right = np.concatenate([np.cumprod(s[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    p = (left * right).astype(a.dtype)
    phase = (np.linalg.det(u) * np.linalg.det(vh))[..., None, None]
    return phase * (_H(vh) * p[..., None, :]) @ _H(u)


def det_grad(a, grad):
    """Gradient of ``tf.linalg.det(a)``: the correct rule ``G conj(det A) A^-H``.

    From Jacobi's formula ``d det A = tr(adj(A) dA)``: with
    ``dL = Re(conj(G) tr(adj(A) dA)) = Re<G adj(A)^H, dA>`` the gradient is
    ``G adj(A)^H``, which is ``G conj(det A) A^-H`` for invertible ``A`` and
    stays finite for singular ``A``.  ``grad`` has the shape of the
    determinant (the batch shape of ``a``).

    TensorFlow's registered rule multiplies by ``det A`` instead of its
    conjugate (:func:`det_grad_as_registered`); for real arrays both agree.
    """
    a, grad = _matrix_and_grad(a, grad, "a", lambda s: s[:-2])
    return grad[..., None, None] * _H(adjugate(a))


def det_grad_as_registered(a, grad):
    """TensorFlow's registered ``_MatrixDeterminantGrad`` as it is: ``G det(A) A^-H``.

    Wrong for complex ``a`` (``det A`` should be conjugated; tensorflow#49946),
    and like TensorFlow it inverts ``a``, so a singular ``a`` raises
    ``numpy.linalg.LinAlgError`` where TensorFlow raises ``InvalidArgumentError``.
    """
    a, grad = _matrix_and_grad(a, grad, "a", lambda s: s[:-2])
    return (grad * np.linalg.det(a))[..., None, None] * _H(np.linalg.inv(a))


def logdet_grad(a, grad):
    """Gradient of the log-absolute-determinant of ``tf.linalg.slogdet(a)``: ``Re(G) A^-H``.

    From ``d log|det A| = Re tr(A^-1 dA)``.  The output is real, so only the
    real part of ``grad`` matters; TensorFlow's registered rule uses ``G``
    itself, which agrees whenever ``grad`` is real (always for real ``a``).
    """
    a, grad = _matrix_and_grad(a, grad, "a", lambda s: s[:-2])
    return np.real(grad)[..., None, None].astype(a.dtype) * _H(np.linalg.inv(a))


def _parse_subscripts(subscripts, operands):
    if not isinstance(subscripts, str):
        raise TypeError(f"subscripts must be a string such as 'ij,jk->ik', got {subscripts!r}")
    if isinstance(operands, np.ndarray) or not isinstance(operands, (list, tuple)):
        raise TypeError(
            f"operands must be a list or tuple of arrays, got {type(operands).__name__}"
        )
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        raise ValueError(
            f"subscripts {subscripts!r}: the ellipsis '...' is not supported; "
            f"name every axis with a letter"
        )
    if spec.count("->") > 1:
        raise ValueError(f"subscripts {subscripts!r} has more than one '->'")
    inputs, _, out = spec.partition("->")
    terms = inputs.split(",")
    if "->" not in spec:  # implicit output: letters used once, sorted, as numpy does
        counts = {c: inputs.count(c) for c in inputs if c != ","}
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    bad = set("".join(terms) + out) - set(string.ascii_letters)
    if bad:
        raise ValueError(
            f"subscripts {subscripts!r} may use only letters, '->' and ','; got {sorted(bad)}"
        )
    if len(terms) != len(operands):
        raise ValueError(
            f"subscripts {subscripts!r} name {len(terms)} operand(s) but {len(operands)} were given"
        )
    if len(set(out)) != len(out):
        raise ValueError(f"subscripts {subscripts!r}: the output repeats a letter")
    arrays, sizes = [], {}
    for k, (term, x) in enumerate(zip(terms, operands, strict=True)):
        x = as_array(x, f"operands[{k}]")
        if x.ndim != len(term):
            raise ValueError(
                f"subscripts {subscripts!r}: term {term!r} has {len(term)} "
                f"letter(s) but operands[{k}] has shape {x.shape}"
            )
        for c, n in zip(term, x.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                raise ValueError(
                    f"subscripts {subscripts!r}: letter {c!r} has size {sizes[c]} "
                    f"and {n} (operands[{k}] has shape {x.shape})"
                )
        arrays.append(x)
    missing = set(out) - set(sizes)
    if missing:
        raise ValueError(
            f"subscripts {subscripts!r}: output letter(s) {sorted(missing)} appear in no operand"
        )
    return terms, out, arrays, sizes


def einsum_grad(subscripts, operands, grad):
    """Gradients of ``einsum(subscripts, *operands)``, one per operand.

    The einsum is linear in each operand, so the gradient of operand ``k`` is
    the einsum of ``grad`` with the other operands (conjugated) into operand
    ``k``'s subscripts.  Two cases need more than one einsum: a letter that
    appears only in operand ``k`` was summed out, so its gradient is the same
    along that axis (broadcast back); a letter repeated in operand ``k``
    (a diagonal, as in a trace ``'ii->'``) gets the gradient on the diagonal
    and zeros elsewhere.  Letters only, no ellipsis.
    """
    terms, out, arrays, sizes = _parse_subscripts(subscripts, operands)
    grad = as_array(grad, "grad")
    check_same_dtype(**{f"operands[{k}]": x for k, x in enumerate(arrays)}, grad=grad)
    check_shape(grad, "grad", tuple(sizes[c] for c in out), f"the output shape of {subscripts!r}")
    conj = [np.conj(x) for x in arrays]
    grads = []
    for k, term in enumerate(terms):
        others = [t for j, t in enumerate(terms) if j != k]
        unique = "".join(dict.fromkeys(term))  # letters of term, first occurrences
        reached = set(out).union(*others)
        kept = "".join(c for c in unique if c in reached)
        g = np.einsum(
            ",".join([out] + others) + "->" + kept, grad, *[x for j, x in enumerate(conj) if j != k]
        )
        # letters summed out inside operand k alone: broadcast back along them
        g = g.reshape([sizes[c] if c in kept else 1 for c in unique])
        g = np.broadcast_to(g, [sizes[c] for c in unique])
        if unique == term:
            grads.append(np.array(g, dtype=arrays[k].dtype))
        else:  # repeated letters: fill the diagonal
            full = np.zeros(arrays[k].shape, dtype=arrays[k].dtype)
            np.einsum(term + "->" + unique, full)[...] = g
            grads.append(full)
    return tuple(grads)


def cholesky_grad(l, grad):
    """Gradient of ``tf.linalg.cholesky(a)`` from its output ``l``: ``sym(L^-H Phi(L^H G) L^-1)``.

    ``Phi`` keeps the lower triangle and halves the diagonal, ``sym(S) =
    (S + S^H) / 2``.  This is the gradient of ``A -> chol((A + A^H) / 2)``:
    like TensorFlow, it treats ``A`` as Hermitian (the kernel reads only the
    lower triangle) and returns a Hermitian gradient.  Only the lower triangle
    of ``grad`` matters (``L``'s upper triangle is always zero).
    """
    l, grad = _matrix_and_grad(l, grad, "l", lambda s: s)
    eye = np.broadcast_to(np.eye(l.shape[-1], dtype=l.dtype), l.shape)
    l_inv = np.linalg.solve(l, eye)
    middle = np.tril(_H(l) @ grad)
    diagonal = np.einsum("...ii->...i", middle)
    diagonal *= 0.5
    s = _H(l_inv) @ middle @ l_inv
    return 0.5 * (s + _H(s))

"""TensorFlow's registered MatMul gradients, reproduced in NumPy.

:func:`matmul_grad` follows the four transpose branches of ``_MatMulGrad`` in
TensorFlow's ``math_grad.py`` (plus the adjoint flags of ``tf.linalg.matmul``),
:func:`batch_matmul_grad` follows ``_BatchMatMulV2`` including its sum over
broadcast batch axes.  :func:`tf_matmul_grad` and :func:`tf_batch_matmul_grad`
ask TensorFlow's own registered functions, for comparison.  TensorFlow is
imported only by those two.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array, check_ndim

_H = lambda x: np.conj(np.swapaxes(x, -1, -2))  # noqa: E731  adjoint of the last two axes


def _check_dtypes(**arrays) -> None:
    dtypes = {name: a.dtype for name, a in arrays.items()}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{n}: {d}" for n, d in dtypes.items())
        raise TypeError(f"the operands must share one dtype, got {listed}")


def _check_flags(transpose, adjoint, name):
    if transpose and adjoint:
        raise ValueError(f"transpose_{name} and adjoint_{name} cannot both be True")


def _op_shape(shape, flip):
    return shape[:-2] + (shape[-1], shape[-2]) if flip else shape


def _mat_mul_grad(a, b, grad, t_a: bool, t_b: bool):
    """The four branches of TensorFlow's ``_MatMulGrad``, in NumPy.

    ``a`` and ``b`` are the op's inputs; ``t_a``/``t_b`` its transpose flags.
    """
    a, b = np.conj(a), np.conj(b)  # TensorFlow's convention for complex inputs
    if not t_a and not t_b:  # Y = A B
        grad_a = grad @ b.T
        grad_b = a.T @ grad
    elif not t_a and t_b:  # Y = A B^T
        grad_a = grad @ b
        grad_b = grad.T @ a
    elif t_a and not t_b:  # Y = A^T B
        grad_a = b @ grad.T
        grad_b = a @ grad
    else:  # Y = A^T B^T
        grad_a = b.T @ grad.T
        grad_b = grad.T @ a.T
    return grad_a, grad_b


def matmul_grad(
    a, b, grad, *, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False
):
    """Gradients of ``tf.linalg.matmul(a, b, ...)`` for rank-2 inputs, in NumPy.

    ``grad`` is the upstream gradient (shape of the product).  Returns
    ``(grad_a, grad_b)`` shaped like ``a`` and ``b``: the vector-Jacobian
    products TensorFlow's registered gradient computes.
    """
    a, b, grad = as_array(a, "a"), as_array(b, "b"), as_array(grad, "grad")
    check_ndim(a, "a", 2)
    check_ndim(b, "b", 2)
    _check_dtypes(a=a, b=b, grad=grad)
    _check_flags(transpose_a, adjoint_a, "a")
    _check_flags(transpose_b, adjoint_b, "b")
    t_a, t_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    pa, pb = _op_shape(a.shape, t_a), _op_shape(b.shape, t_b)
    if pa[1] != pb[0]:
        raise ValueError(
            f"incompatible shapes: a {a.shape} (transposed: {t_a}) and b {b.shape} "
            f"(transposed: {t_b}) give {pa} @ {pb}"
        )
    if grad.shape != (pa[0], pb[1]):
        raise ValueError(f"grad must have the product's shape {(pa[0], pb[1])}, got {grad.shape}")
    # tf.linalg.matmul turns adjoint into conj followed by a transposed MatMul;
    # the gradient of conj is conj, so the adjoint cases wrap the four branches.
    a_in = np.conj(a) if adjoint_a else a
    b_in = np.conj(b) if adjoint_b else b
    grad_a, grad_b = _mat_mul_grad(a_in, b_in, grad, t_a, t_b)
    return (np.conj(grad_a) if adjoint_a else grad_a, np.conj(grad_b) if adjoint_b else grad_b)


def _reduce_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``g`` over the batch axes that broadcasting added to an input of ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape[:-2]) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def batch_matmul_grad(x, y, grad, *, adj_x=False, adj_y=False):
    """Gradients of ``BatchMatMulV2`` (``x @ y`` with broadcast batch axes), in NumPy.

    Follows TensorFlow's ``_BatchMatMulV2``: the four adjoint branches, then a
    sum over every batch axis that broadcasting stretched, so each gradient
    has its input's shape.
    """
    x, y, grad = as_array(x, "x"), as_array(y, "y"), as_array(grad, "grad")
    for name, arr in (("x", x), ("y", y)):
        if arr.ndim < 2:
            raise ValueError(
                f"{name} must have rank 2 or more, got rank {arr.ndim} with shape {arr.shape}"
            )
    _check_dtypes(x=x, y=y, grad=grad)
    px, py = _op_shape(x.shape, adj_x), _op_shape(y.shape, adj_y)
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise ValueError(
            f"batch shapes do not broadcast: x has shape {x.shape}, y has shape {y.shape}"
        ) from None
    if px[-1] != py[-2]:
        raise ValueError(
            f"incompatible shapes: x {x.shape} (adjoint: {adj_x}) and y {y.shape} "
            f"(adjoint: {adj_y}); inner sizes {px[-1]} and {py[-2]} differ"
        )
    out_shape = batch + (px[-2], py[-1])
    if grad.shape != out_shape:
        raise ValueError(f"grad must have the product's shape {out_shape}, got {grad.shape}")
    if not adj_x and not adj_y:
        gx, gy = grad @ _H(y), _H(x) @ grad
    elif not adj_x and adj_y:
        gx, gy = grad @ y, _H(grad) @ x
    elif adj_x and not adj_y:
        gx, gy = y @ _H(grad), x @ grad
    else:
        gx, gy = _H(y) @ _H(grad), _H(grad) @ _H(x)
    return _reduce_to(gx, x.shape), _reduce_to(gy, y.shape)


def _apply_op(x, transpose: bool, adjoint: bool):
    return _H(x) if adjoint else (np.swapaxes(x, -1, -2) if transpose else x)


def fd_matmul_grad(
    a, b, grad, *, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False
):
    """Finite-difference reference for :func:`matmul_grad`, in float64/complex128.

    Real inputs: the numeric Jacobian of the product, contracted with ``grad``.
    Complex inputs: the gradient of the real loss ``L = Re sum(conj(grad) * Y)``
    in TensorFlow's convention, ``dL/dRe(x) + 1j * dL/dIm(x)``, each part by
    central differences.  Slow (two products per perturbed entry, one on
    each side of the central difference): for checks.
    """
    from .jacobian import numeric_jacobian
    from .vjp import vjp_from_jacobian

    a, b, grad = as_array(a, "a"), as_array(b, "b"), as_array(grad, "grad")
    flags = dict(
        transpose_a=transpose_a, transpose_b=transpose_b, adjoint_a=adjoint_a, adjoint_b=adjoint_b
    )
    matmul_grad(a, b, grad, **flags)  # same checks, same messages
    complex_ = np.iscomplexobj(a)
    wide = np.complex128 if complex_ else np.float64
    a, b, grad = a.astype(wide), b.astype(wide), grad.astype(wide)

    def product(a_, b_):
        return _apply_op(a_, transpose_a, adjoint_a) @ _apply_op(b_, transpose_b, adjoint_b)

    if not complex_:
        return (
            vjp_from_jacobian(numeric_jacobian(lambda x: product(x, b), a), grad),
            vjp_from_jacobian(numeric_jacobian(lambda x: product(a, x), b), grad),
        )

    def loss(a_, b_):
        return np.real(np.sum(np.conj(grad) * product(a_, b_)))

    def gradient(x, rebuild):
        d_re = numeric_jacobian(lambda r: loss(*rebuild(r + 1j * x.imag)), x.real)
        d_im = numeric_jacobian(lambda i: loss(*rebuild(x.real + 1j * i)), x.imag)
        return d_re + 1j * d_im

    return gradient(a, lambda x: (x, b)), gradient(b, lambda x: (a, x))


def _tf():
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def _run_in_graph(build, *arrays):
    """Build ops with ``build(*placeholders)`` in a fresh graph and run them once.

    A plain graph, as TensorFlow 1 code used, rather than a ``tf.function``:
    each call has its own flags and shapes, and a function retraced for every
    call makes TensorFlow log retracing warnings.
    """
    tf = _tf()
    graph = tf.Graph()
    with graph.as_default():
        inputs = [tf.constant(x) for x in arrays]
        outputs = build(*inputs)
    with tf.compat.v1.Session(graph=graph) as session:
        return tuple(np.asarray(x) for x in session.run(outputs))


def tf_matmul_grad(
    a, b, grad, *, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False
):
    """The same as :func:`matmul_grad`, computed by TensorFlow's registered gradients.

    Builds ``MatMul`` (after ``Conj`` for adjoint flags, as ``tf.linalg.matmul``
    does) in a graph, looks up the registered gradient functions of those ops
    and calls them with ``grad``.  Returns NumPy arrays.
    """
    a, b, grad = as_array(a, "a"), as_array(b, "b"), as_array(grad, "grad")
    matmul_grad(
        a,
        b,
        grad,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        adjoint_a=adjoint_a,
        adjoint_b=adjoint_b,
    )  # same checks, same messages
    tf = _tf()
    from tensorflow.python.framework import ops

    lookup = ops.gradient_registry.lookup

    def build(a, b, grad):
        a_in = tf.math.conj(a) if adjoint_a else a
        b_in = tf.math.conj(b) if adjoint_b else b
        y = tf.raw_ops.MatMul(
            a=a_in,
            b=b_in,
            transpose_a=transpose_a or adjoint_a,
            transpose_b=transpose_b or adjoint_b,
        )
        ga, gb = lookup("MatMul")(y.op, grad)
        # tf.math.conj adds a Conj op for complex inputs only (real: identity).
        if a_in.op.type == "Conj":
            ga = lookup("Conj")(a_in.op, ga)
        if b_in.op.type == "Conj":
            gb = lookup("Conj")(b_in.op, gb)
        return ga, gb

    return _run_in_graph(build, a, b, grad)


def tf_batch_matmul_grad(x, y, grad, *, adj_x=False, adj_y=False):
    """The same as :func:`batch_matmul_grad`, computed by TensorFlow's registered gradient."""
    x, y, grad = as_array(x, "x"), as_array(y, "y"), as_array(grad, "grad")
    batch_matmul_grad(x, y, grad, adj_x=adj_x, adj_y=adj_y)  # same checks, same messages
    tf = _tf()
    from tensorflow.python.framework import ops

    def build(x, y, grad):
        out = tf.raw_ops.BatchMatMulV2(x=x, y=y, adj_x=adj_x, adj_y=adj_y)
        return tuple(ops.gradient_registry.lookup("BatchMatMulV2")(out.op, grad))

    return _run_in_graph(build, x, y, grad)

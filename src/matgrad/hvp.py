"""Nested tapes: an inner tape's gradient, and two Hessian-vector products.

The second-derivatives page defines the two routes to an HVP with these
functions, and the second-derivative costs page counts what they run.
Importing this module imports TensorFlow.
"""

from __future__ import annotations

import tensorflow as tf

from ._checks import check_callable


def _check_direction(W, U) -> None:
    if tuple(U.shape) != tuple(W.shape):
        raise ValueError(f"U must have W's shape {tuple(W.shape)}, got {tuple(U.shape)}")


def gradient(loss, W):
    """The gradient of ``loss(W)``, taken by an inner tape (an outer one records it)."""
    check_callable(loss, "loss")
    with tf.GradientTape() as inner:
        L = loss(W)
    return inner.gradient(L, W)


def hvp_forward_over_reverse(loss, W, U):
    """The HVP along ``U``: a JVP of the gradient."""
    check_callable(loss, "loss")
    _check_direction(W, U)
    with tf.autodiff.ForwardAccumulator(primals=W, tangents=U) as acc:
        g = gradient(loss, W)
    return acc.jvp(g)


def hvp_reverse_over_reverse(loss, W, U):
    """The HVP along ``U``: a VJP of the gradient, with upstream gradient ``U``."""
    check_callable(loss, "loss")
    _check_direction(W, U)
    with tf.GradientTape() as outer:
        g = gradient(loss, W)
    return outer.gradient(g, W, output_gradients=U)

"""matgrad.hvp: nested tapes' gradient and the two Hessian-vector products."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from matgrad.hvp import gradient, hvp_forward_over_reverse, hvp_reverse_over_reverse  # noqa: E402


def _least_squares():
    rng = np.random.default_rng(0)
    X = tf.constant(rng.standard_normal((6, 4)))
    D = tf.constant(rng.standard_normal((6, 3)))
    W = tf.Variable(rng.standard_normal((4, 3)))
    U = tf.constant(rng.standard_normal((4, 3)))

    def loss(W):
        return tf.reduce_sum((X @ W - D) ** 2)

    return X, D, W, U, loss


@pytest.mark.tf
def test_both_routes_give_the_least_squares_hvp():
    """For ||XW - D||^2 the gradient is 2 X^T (XW - D) and the HVP along U is 2 X^T X U."""
    X, D, W, U, loss = _least_squares()
    np.testing.assert_allclose(gradient(loss, W), 2 * tf.transpose(X) @ (X @ W - D), rtol=1e-12)
    expected = 2 * tf.transpose(X) @ X @ U
    for route in (hvp_forward_over_reverse, hvp_reverse_over_reverse):
        np.testing.assert_allclose(route(loss, W, U), expected, rtol=1e-12, err_msg=route.__name__)


@pytest.mark.tf
@pytest.mark.parametrize("function", [gradient, hvp_forward_over_reverse, hvp_reverse_over_reverse])
def test_a_loss_that_is_not_callable_is_a_type_error(function):
    _, _, W, U, _ = _least_squares()
    args = (W,) if function is gradient else (W, U)
    with pytest.raises(TypeError, match="loss must be callable, got float"):
        function(1.0, *args)


@pytest.mark.tf
@pytest.mark.parametrize("route", [hvp_forward_over_reverse, hvp_reverse_over_reverse])
def test_a_direction_of_another_shape_is_a_value_error(route):
    _, _, W, _, loss = _least_squares()
    with pytest.raises(ValueError, match=r"U must have W's shape \(4, 3\), got \(3, 4\)"):
        route(loss, W, tf.zeros((3, 4), tf.float64))

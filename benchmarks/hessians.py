"""Cost of a gradient, two Hessian-vector products and the full Hessian, at large n.

These sizes are too slow for the book build.

Run by `make bench`. The least-squares loss 0.5 * ||XW - D||^2 with X, D and
W all n x n; each function is compiled with tf.function and timed after a
warm-up call (median of a few runs). The page "Second derivatives" counts the
multiplications of the same computations and shows no times: at the sizes a
page build can afford, the fixed cost of each call hides the counts.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from matgrad.timing import median_time  # noqa: E402

SIZES = (16, 24, 32, 48, 64)
ANY = [tf.TensorSpec([None, None], tf.float64)] * 3


@tf.function(input_signature=ANY)
def gradient(X, D, W):
    with tf.GradientTape() as t:
        t.watch(W)
        L = 0.5 * tf.reduce_sum((X @ W - D) ** 2)
    return t.gradient(L, W)


@tf.function(input_signature=ANY + ANY[:1])
def hvp_reverse_over_reverse(X, D, W, U):
    with tf.GradientTape() as t:
        t.watch(W)
        g = gradient(X, D, W)
    return t.gradient(g, W, output_gradients=U)


@tf.function(input_signature=ANY + ANY[:1])
def hvp_forward_over_reverse(X, D, W, U):
    with tf.autodiff.ForwardAccumulator(W, U) as acc:
        g = gradient(X, D, W)
    return acc.jvp(g)


@tf.function(input_signature=ANY)
def hessian(X, D, W):
    with tf.GradientTape() as t:
        t.watch(W)
        g = gradient(X, D, W)
    return t.jacobian(g, W)


def main() -> None:
    rng = np.random.default_rng(0)
    print("Least squares, X, D and W n x n; median seconds after compiling")
    print(
        f"{'n':>4} {'gradient':>10} {'HVP rev/rev':>12} {'HVP fwd/rev':>12} {'Hessian':>10}"
        f" {'Hessian/grad':>13} {'pfor mults':>16}"
    )
    for n in SIZES:
        X, D, W, U = (tf.constant(rng.standard_normal((n, n))) for _ in range(4))
        H = hessian(X, D, W).numpy()
        np.testing.assert_allclose(
            H.reshape(n * n, n * n), np.kron(X.numpy().T @ X.numpy(), np.eye(n)), atol=1e-8
        )
        args = (X, D, W)
        t_g = median_time(lambda args=args: gradient(*args), 5)
        t_rr = median_time(lambda args=args, U=U: hvp_reverse_over_reverse(*args, U), 5)
        t_fr = median_time(lambda args=args, U=U: hvp_forward_over_reverse(*args, U), 5)
        t_h = median_time(lambda args=args: hessian(*args), 3)
        # pfor's graph: 2pnm*nm for the batched passes + pnm for XW (p = n = m)
        mults = 2 * n**5 + n**3
        row = f"{n:4d} {t_g:10.2e} {t_rr:12.2e} {t_fr:12.2e} {t_h:10.2e}"
        print(f"{row} {t_h / t_g:13.0f} {mults:16d}")


if __name__ == "__main__":
    main()

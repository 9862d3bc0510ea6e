"""Cost of the full Jacobian of Y = T @ B at sizes too slow for the book build.

Run by `make bench`. Each method is compiled with tf.function and timed after
a warm-up call (median of a few runs); the table also shows the Jacobian's
size. The chapter "Rebuilding the full Jacobian" measures the same methods
at small n while the book builds.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from matgrad.timing import format_bytes, median_time  # noqa: E402

SIZES = (16, 32, 64, 96, 128)
SKIP_LOOP_ABOVE = 64  # the while_loop version makes n^2 sequential passes


def _tape(method):
    @tf.function
    def run(T, B):
        with tf.GradientTape() as tape:
            tape.watch(T)
            Y = T @ B
        if method == "vjp":
            return tape.gradient(Y, T, output_gradients=tf.ones_like(Y))
        return tape.jacobian(Y, T, experimental_use_pfor=(method == "pfor"))

    return run


@tf.function
def _forward(T, B):
    n_in = tf.size(T)
    tangents = tf.reshape(tf.eye(n_in), tf.concat([[n_in], tf.shape(T)], 0))

    def one_jvp(u):
        with tf.autodiff.ForwardAccumulator(T, u) as acc:
            Y = T @ B
        return acc.jvp(Y)

    return tf.vectorized_map(one_jvp, tangents)


METHODS = {
    "one VJP": _tape("vjp"),
    "jacobian pfor": _tape("pfor"),
    "jacobian loop": _tape("loop"),
    "forward vmap": _forward,
}


def main() -> None:
    rng = np.random.default_rng(0)
    header = f"{'n':>5} {'dY/dT size':>11} " + " ".join(f"{m:>15}" for m in METHODS)
    print(header)
    print("-" * len(header))
    for n in SIZES:
        T = tf.constant(rng.standard_normal((n, n)), tf.float32)
        B = tf.constant(rng.standard_normal((n, n)), tf.float32)
        cells = []
        for name, run in METHODS.items():
            if name == "jacobian loop" and n > SKIP_LOOP_ABOVE:
                cells.append(f"{'(skipped)':>15}")
                continue
            seconds = median_time(lambda run=run, T=T, B=B: run(T, B), repeat=3)
            cells.append(f"{seconds * 1e3:12.2f} ms")
        print(f"{n:>5} {format_bytes(4 * n**4):>11} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()

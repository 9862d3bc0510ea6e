"""Cost of the full Jacobian of Y = T @ B at sizes too slow for the book build.

Run by `make bench`. The page "What the full Jacobian costs"
(chapters/05b_jacobian_costs.md) counts the multiplications of each route
and times them at n <= 32 while the book builds; there, the smaller sizes
time mostly the fixed cost of a call. Here the sizes are large enough for
the n^5 multiplications of `tape.jacobian` to dominate its time: each route
is compiled with tf.function per shape, timed after a warm-up call (best of
a few runs), and the table ends with the log-log slope of the pfor times
over the sizes measured (5 if the time follows the count).
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from matgrad.timing import best_time, fitted_slope, format_bytes  # noqa: E402

SIZES = (64, 80, 96, 112, 128)
SKIP_LOOP_ABOVE = 64  # the while_loop version makes n^2 sequential passes


def _route(kind, use_pfor=True):
    @tf.function
    def run(T, B):
        with tf.GradientTape() as tape:
            tape.watch(T)
            Y = T @ B
        if kind == "gradient":
            return tape.gradient(Y, T, output_gradients=tf.ones_like(Y))
        return getattr(tape, kind)(Y, T, experimental_use_pfor=use_pfor)

    return run


METHODS = {
    "one VJP": _route("gradient"),
    "batch_jacobian": _route("batch_jacobian"),
    "jacobian pfor": _route("jacobian"),
    "jacobian loop": _route("jacobian", use_pfor=False),
}


def main() -> None:
    rng = np.random.default_rng(0)
    header = f"{'n':>5} {'n^5 mult.':>14} {'dY/dT size':>11} " + " ".join(
        f"{m:>15}" for m in METHODS
    )
    print(header)
    print("-" * len(header))
    pfor_times = []
    for n in SIZES:
        T = tf.constant(rng.standard_normal((n, n)), tf.float32)
        B = tf.constant(rng.standard_normal((n, n)), tf.float32)
        cells = []
        for name, run in METHODS.items():
            if name == "jacobian loop" and n > SKIP_LOOP_ABOVE:
                cells.append(f"{'(skipped)':>15}")
                continue
            seconds = best_time(lambda run=run, T=T, B=B: run(T, B), repeat=3)
            if name == "jacobian pfor":
                pfor_times.append(seconds)
            cells.append(f"{seconds * 1e3:12.2f} ms")
        print(f"{n:>5} {n**5:>14,} {format_bytes(4 * n**4):>11} " + " ".join(cells), flush=True)
    slope = fitted_slope(SIZES, pfor_times, last=len(SIZES))
    print(f"log-log slope of the pfor times over n = {SIZES[0]}..{SIZES[-1]}: {slope:.1f}")


if __name__ == "__main__":
    main()

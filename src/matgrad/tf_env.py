"""Running TensorFlow under a chosen environment, in a fresh process.

TensorFlow reads ``TF_ENABLE_ONEDNN_OPTS`` once, at import.  To show both
settings on one page, :func:`seed_gradient_in_subprocess` computes the
puzzle's ``tape.gradient(Y, T)`` in a child Python with the flag set as asked
and returns the array; the child's log lines stay in the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

_CHILD = """
import json
import tensorflow as tf
from matgrad.examples import SEED_T, SEED_B
T = tf.Variable(SEED_T)
with tf.GradientTape() as tape:
    Y = tf.matmul(T, SEED_B)
print(json.dumps(tape.gradient(Y, T).numpy().tolist()))
"""


def seed_gradient_in_subprocess(onednn: bool, timeout: float = 120) -> np.ndarray:
    """``tape.gradient(SEED_T @ SEED_B, SEED_T)`` computed with oneDNN on or off."""
    if not isinstance(onednn, bool):
        raise TypeError(f"onednn must be True or False, got {onednn!r}")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn else "0", TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the TensorFlow child process failed:\n{proc.stderr[-2000:]}")
    # float32 -> Python float -> JSON -> float32 is exact.
    return np.array(json.loads(proc.stdout.strip().splitlines()[-1]), dtype=np.float32)


class _DropRetracingWarning:
    """A logging filter that drops TensorFlow's "triggered tf.function retracing" warning."""

    def filter(self, record) -> bool:
        return "triggered tf.function retracing" not in record.getMessage()


def hide_retracing_warning() -> None:
    """Drop only TensorFlow's retracing warning; every other log record passes.

    Eager ``tape.jacobian`` and ``tape.batch_jacobian`` wrap their vectorized
    loop in a new internal ``tf.function`` on every call, so a page that calls
    them five times gets a warning about TensorFlow's internals, not about its
    own code.  Calling this twice adds the filter once.
    """
    import logging

    logger = logging.getLogger("tensorflow")
    if not any(isinstance(f, _DropRetracingWarning) for f in logger.filters):
        logger.addFilter(_DropRetracingWarning())

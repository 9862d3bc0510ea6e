"""Running TensorFlow under a chosen environment, in a fresh process.

TensorFlow reads ``TF_ENABLE_ONEDNN_OPTS`` once, at the first call of its
switch ``IsMklEnabled`` (which ``import tensorflow`` makes), and oneDNN reads
``ONEDNN_MAX_CPU_ISA`` once, when it first runs.  To show several settings on
one page, :func:`seed_gradient_in_subprocess` computes the puzzle's
``tape.gradient(Y, T)`` in a child Python with the flag set as asked and
returns the array; :func:`onednn_seed_gradient` does it with oneDNN on and
also reports which instruction set oneDNN chose for this CPU;
:func:`onednn_decision` asks TensorFlow's switch (``IsMklEnabled``) in a
process started with the variable as given, before and after the variable
changes; :func:`onednn_in_build` reports whether the installed TensorFlow
has oneDNN at all (builds for macOS and most arm64 machines have none); and
:func:`onednn_by_default` reports whether it turns oneDNN on when the
variable is not set. The child's log lines stay in the child.

With ``MATGRAD_TF_WITHOUT_ONEDNN=1`` in the environment, these functions
answer as they would with a TensorFlow built without oneDNN (``IsMklEnabled``
is then always false), so that the book's tests can run the pages' branch
for such builds on a machine whose TensorFlow has oneDNN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

#: The environment variable that makes this module answer as a TensorFlow
#: built without oneDNN would (for the tests of the pages' branch for such builds).
WITHOUT_ONEDNN = "MATGRAD_TF_WITHOUT_ONEDNN"


def _simulating_no_onednn() -> bool:
    return os.environ.get(WITHOUT_ONEDNN) == "1"


_CHILD = """
import json
import tensorflow as tf
from matgrad.examples import SEED_T, SEED_B
T = tf.Variable(SEED_T)
with tf.GradientTape() as tape:
    Y = tf.matmul(T, SEED_B)
print(json.dumps(tape.gradient(Y, T).numpy().tolist()))
"""


# IsMklEnabled lives in a small extension module; loading it by its path skips
# the import of the whole TensorFlow package (about a second instead of several).
# It prints the two answers and the variable as it was at the second.
_DEFAULT_CHILD = """
import glob, importlib.machinery, importlib.util, os
name = "tensorflow.python.util._pywrap_util_port"
try:
    root = os.path.dirname(importlib.util.find_spec("tensorflow").origin)
    stem = os.path.join(root, "python", "util", "_pywrap_util_port")
    path = next(p for suffix in importlib.machinery.EXTENSION_SUFFIXES
                for p in glob.glob(stem + suffix))
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    port = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(port)
except (ImportError, StopIteration, OSError):    # another layout: import TensorFlow
    from tensorflow.python.util import _pywrap_util_port as port
import json, sys
first = bool(port.IsMklEnabled())
if len(sys.argv) > 1:                 # the variable changes, then TensorFlow is asked again
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = sys.argv[1]
second = bool(port.IsMklEnabled())
print(json.dumps([first, second, os.environ.get("TF_ENABLE_ONEDNN_OPTS")]))
"""


def _run_child(
    env: dict, timeout: float, script: str = _CHILD, args: Sequence[str] = ()
) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the TensorFlow child process failed:\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()


def _gradient(lines: list[str]) -> np.ndarray:
    # float32 -> Python float -> JSON -> float32 is exact.
    return np.array(json.loads(lines[-1]), dtype=np.float32)


def seed_gradient_in_subprocess(onednn: bool, timeout: float = 120) -> np.ndarray:
    """``tape.gradient(SEED_T @ SEED_B, SEED_T)`` computed with oneDNN on or off."""
    if not isinstance(onednn, bool):
        raise TypeError(f"onednn must be True or False, got {onednn!r}")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn else "0", TF_CPP_MIN_LOG_LEVEL="3")
    return _gradient(_run_child(env, timeout))


class OneDNNRun(NamedTuple):
    """What a child process with oneDNN on computed, and the kernels it used."""

    gradient: np.ndarray  #: ``tape.gradient(SEED_T @ SEED_B, SEED_T)``
    isa: str  #: the instruction set oneDNN chose, as its verbose log names it


def onednn_seed_gradient(max_cpu_isa: str | None = None, timeout: float = 120) -> OneDNNRun:
    """The seed gradient with oneDNN on, optionally capped to ``max_cpu_isa``.

    ``max_cpu_isa`` is a value of oneDNN's ``ONEDNN_MAX_CPU_ISA`` (``"SSE41"``,
    ``"AVX2"``, ``"AVX512_CORE"``, ...): oneDNN then uses no instruction set
    newer than that, as on an older CPU. ``None`` lets it choose for this CPU
    (or keeps a cap already set in the environment).
    The instruction set it chose is read from its verbose log
    (``ONEDNN_VERBOSE=1``).
    """
    if max_cpu_isa is not None and not (isinstance(max_cpu_isa, str) and max_cpu_isa.isupper()):
        raise ValueError(
            f"max_cpu_isa must be an ONEDNN_MAX_CPU_ISA value such as 'AVX2', got {max_cpu_isa!r}"
        )
    if _simulating_no_onednn():
        raise RuntimeError(f"{WITHOUT_ONEDNN}=1: this TensorFlow is taken to have no oneDNN")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1", TF_CPP_MIN_LOG_LEVEL="3", ONEDNN_VERBOSE="1")
    if max_cpu_isa is not None:
        env["ONEDNN_MAX_CPU_ISA"] = max_cpu_isa
    lines = _run_child(env, timeout)
    isa = next(
        (
            line.split("isa:", 1)[1].strip()
            for line in lines
            if line.startswith("onednn_verbose") and ",isa:" in line
        ),
        "unknown",
    )
    return OneDNNRun(_gradient(lines), isa)


def onednn_decision(
    start: str | None, then: str | None = None, timeout: float = 120
) -> tuple[bool, bool]:
    """What ``IsMklEnabled`` answers in a fresh process, asked twice.

    The process starts with ``TF_ENABLE_ONEDNN_OPTS=start`` (``None``: unset)
    and asks TensorFlow's switch (``IsMklEnabled``, ``tensorflow/core/util/port.cc``);
    then it sets the variable to ``then`` (``None``: leaves it) and asks again.
    TensorFlow decides once per process, so the second answer is the first.
    Only the small extension module that holds the switch is loaded, not the
    whole TensorFlow package (about a second instead of several); the switch
    then decides at its first call instead of during ``import tensorflow``.
    The child also reports the variable as it was at the second question,
    and a value other than the one asked for is an error.
    """
    for name, value in (("start", start), ("then", then)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string such as '0' or '1', or None, got {value!r}")
    if _simulating_no_onednn():
        return False, False  # IsMklEnabled in a build without oneDNN, whatever the variable
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if start is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = start
    lines = _run_child(env, timeout, _DEFAULT_CHILD, () if then is None else (then,))
    answer = lines[-1] if lines else ""
    try:
        first, second, variable = json.loads(answer)
    except (ValueError, TypeError):
        first = second = variable = None
    if not (isinstance(first, bool) and isinstance(second, bool)):
        raise RuntimeError(
            f"the TensorFlow child process printed {answer!r}, not two answers and the variable"
        )
    expected = start if then is None else then
    if variable != expected:
        raise RuntimeError(
            f"the child's TF_ENABLE_ONEDNN_OPTS was {variable!r} at the second question, "
            f"not {expected!r}"
        )
    return first, second


def onednn_in_build(timeout: float = 120) -> bool:
    """Whether the installed TensorFlow was built with oneDNN.

    A process started with ``TF_ENABLE_ONEDNN_OPTS=1`` asks ``IsMklEnabled``:
    a build with oneDNN follows the variable and answers true; a build
    without it (macOS, most arm64 builds) answers false whatever the variable.
    """
    return onednn_decision("1", timeout=timeout)[0]


def onednn_by_default(timeout: float = 120) -> bool:
    """Whether the installed TensorFlow uses oneDNN when ``TF_ENABLE_ONEDNN_OPTS`` is unset.

    TensorFlow decides once, at the first call of its switch, which
    ``import tensorflow`` makes (``IsMklEnabled`` and its default policy in
    ``tensorflow/core/util/port.cc``): a build without oneDNN never
    uses it; a Linux build uses it on x86 CPUs with AVX512_VNNI, AVX512_BF16,
    AVX_VNNI or AMX and on Arm Neoverse V1; a Windows x86 build always.  A child process without the
    variable reports the decision for this build on this CPU.
    """
    return onednn_decision(None, timeout=timeout)[0]


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

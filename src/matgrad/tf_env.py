"""Running TensorFlow under a chosen environment, in a fresh process.

TensorFlow reads ``TF_ENABLE_ONEDNN_OPTS`` once, at the first call of its
switch ``IsMklEnabled`` (which ``import tensorflow`` makes), and oneDNN reads
``ONEDNN_MAX_CPU_ISA`` once, when it first runs.  To show several settings on
one page, :func:`seed_gradient_in_subprocess` computes the puzzle's
``tape.gradient(Y, T)`` in a child Python with the flag set as asked and
returns the array; :func:`onednn_seed_gradient` does it with oneDNN's
custom operations on or off and also reports, from oneDNN's verbose log, the
highest instruction set oneDNN allows itself and how each of its sgemm calls
received its second operand; :func:`onednn_runs` runs several settings side
by side, :func:`runs_table` shows them, in both editions, and
:func:`setting_name` names a setting as the table does;
:func:`onednn_decision` asks TensorFlow's switch (``IsMklEnabled``) in a
process started with the variable as given, before and after the variable
changes; :func:`onednn_in_build` reports whether the installed TensorFlow
has oneDNN at all (the macOS builds have none); and
:func:`onednn_by_default` reports whether it turns oneDNN's custom
operations on when the variable is not set. The child's log lines stay in
the child.

With ``MATGRAD_TF_WITHOUT_ONEDNN=1`` in the environment, these functions
answer as they would with a TensorFlow built without oneDNN (``IsMklEnabled``
is then always false), so that the book's tests can run the pages' branch
for such builds on a machine whose TensorFlow has oneDNN.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .examples import SEED_B, SEED_T

#: The environment variable that makes this module answer as a TensorFlow
#: built without oneDNN would (for the tests of the pages' branch for such builds).
WITHOUT_ONEDNN = "MATGRAD_TF_WITHOUT_ONEDNN"


def _simulating_no_onednn() -> bool:
    return os.environ.get(WITHOUT_ONEDNN) == "1"


# A child computes with TensorFlow alone, but ``import tensorflow`` also imports
# Keras (for its optimizers) and, through TFLite's converter, JAX, when they are
# installed, as they are in the book's venv: about two of the import's five
# seconds of CPU, in every child. A None in sys.modules makes ``import keras``
# and ``import jax`` raise ImportError, which TensorFlow treats as "not
# installed" (it checks for both with try/except ImportError).
# (tests/test_floats.py checks that a child loads neither.) The child of
# onednn_decision(import_tensorflow=True) imports TensorFlow whole, as a
# user's program does.

# The products run in this order, so that the gradient's backward product is
# the child's last sgemm call and Bᵀ written out first its first. Op
# determinism on: each run repeats itself.
# Right after the import, before anything asks TensorFlow's switch
# (IsMklEnabled), the child sets TF_ENABLE_ONEDNN_OPTS to the other value, and
# only then asks: the answer is the start value only if the import had
# already decided. It asks a second time to show the answer stays.
# The first line keeps Keras and JAX out of the child (_WITHOUT_KERAS_AND_JAX).
_WITHOUT_KERAS_AND_JAX = """
import sys
sys.modules["keras"] = sys.modules["jax"] = None
"""
_CHILD = (
    _WITHOUT_KERAS_AND_JAX
    + """
import base64
import json
import os
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port as port
from matgrad.examples import SEED_T, SEED_B
from matgrad.tf_env import long_operands
flipped = "0" if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "1" else "1"
os.environ["TF_ENABLE_ONEDNN_OPTS"] = flipped
switch = [bool(port.IsMklEnabled()), bool(port.IsMklEnabled())]
tf.config.experimental.enable_op_determinism()
G, B = tf.ones((5, 3)), tf.constant(SEED_B)
transposed_first = tf.matmul(G, tf.transpose(B))
G_long, B_long = long_operands()
long_product = tf.matmul(G_long, B_long, transpose_b=True)
T = tf.Variable(SEED_T)
with tf.GradientTape() as tape:
    Y = tf.matmul(T, B)
gradient = tape.gradient(Y, T)
long_bytes = base64.b64encode(long_product.numpy().tobytes()).decode()
print(json.dumps([transposed_first.numpy().tolist(), gradient.numpy().tolist(), switch,
                  long_bytes]))
"""
)


# IsMklEnabled lives in a small extension module; loading it by its path skips
# the import of the whole TensorFlow package (about a second instead of several);
# its first argument, "import" or "load", says which.
# It prints the two answers and the variable as it was at the second.
_DEFAULT_CHILD = """
import glob, importlib.machinery, importlib.util, os, sys
name = "tensorflow.python.util._pywrap_util_port"
if sys.argv[1] == "import":            # import TensorFlow as a user's program does
    import tensorflow
    from tensorflow.python.util import _pywrap_util_port as port
else:
    try:
        root = os.path.dirname(importlib.util.find_spec("tensorflow").origin)
        stem = os.path.join(root, "python", "util", "_pywrap_util_port")
        path = next(p for suffix in importlib.machinery.EXTENSION_SUFFIXES
                    for p in glob.glob(stem + suffix))
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        port = importlib.util.module_from_spec(
            importlib.util.spec_from_file_location(name, path, loader=loader))
        loader.exec_module(port)
    except (ImportError, StopIteration, OSError):  # another layout: import TensorFlow
        from tensorflow.python.util import _pywrap_util_port as port
import json
first = bool(port.IsMklEnabled())
if len(sys.argv) > 2:                 # the variable changes, then TensorFlow is asked again
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = sys.argv[2]
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


def _arrays(lines: list[str]) -> list[np.ndarray]:
    # float32 -> Python float -> JSON -> float32 is exact.
    return [np.array(a, dtype=np.float32) for a in json.loads(lines[-1])[:2]]


def long_operands() -> tuple[np.ndarray, np.ndarray]:
    """The longer product's operands, ``G`` (64 × 300) and ``B`` (300 × 300), float32.

    Random normal, from seeds 0 and 1; the oneDNN appendix multiplies
    ``G @ B.T`` in its kernel, in XLA and in each child of :func:`onednn_runs`.
    """
    G = np.random.default_rng(0).standard_normal((64, 300))
    B = np.random.default_rng(1).standard_normal((300, 300))
    return G.astype(np.float32), B.astype(np.float32)


def _switch(lines: list[str]) -> tuple[bool, ...]:
    return tuple(bool(answer) for answer in json.loads(lines[-1])[2])


def _gradient(lines: list[str]) -> np.ndarray:
    return _arrays(lines)[1]


def seed_gradient_in_subprocess(onednn: bool, timeout: float = 120) -> np.ndarray:
    """``tape.gradient(SEED_T @ SEED_B, SEED_T)`` computed with oneDNN on or off."""
    if not isinstance(onednn, bool):
        raise TypeError(f"onednn must be True or False, got {onednn!r}")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn else "0", TF_CPP_MIN_LOG_LEVEL="3")
    return _gradient(_run_child(env, timeout))


class OneDNNRun(NamedTuple):
    """What a child process computed, and what oneDNN's verbose log said."""

    gradient: np.ndarray  #: ``tape.gradient(SEED_T @ SEED_B, SEED_T)``
    #: the highest instruction set oneDNN allows itself on this CPU (printed
    #: when it starts, not the kernel chosen for a product); "unknown" when
    #: oneDNN never ran
    isa: str
    #: ``tf.matmul(ones((5, 3)), tf.transpose(SEED_B))``: Bᵀ written out first
    transposed_first: np.ndarray = np.zeros((5, 3), np.float32)
    #: the layout of the second operand of each oneDNN sgemm call, in order:
    #: "ab" (no transpose flag) or "ba" (transpose flag); the last one is the
    #: gradient's backward product
    sgemm_layouts: tuple[str, ...] = ()
    #: TensorFlow's switch (``IsMklEnabled``), asked twice, after the child set
    #: ``TF_ENABLE_ONEDNN_OPTS`` to the other value right after ``import tensorflow``
    switch: tuple[bool, ...] = ()
    #: the operands of each oneDNN sgemm call, in order, as the verbose log
    #: writes them, e.g. "src_f32::blocked:ab:f0 wei_f32::blocked:ba:f0
    #: dst_f32::blocked:ab:f0"
    sgemm_operands: tuple[str, ...] = ()
    #: ``G @ B.T`` for :func:`long_operands`, with ``transpose_b=True``
    long_product: np.ndarray = np.zeros((0, 0), np.float32)
    #: the problem of each oneDNN sgemm call, in order, as the verbose log
    #: writes it: "MxK:KxN", e.g. "5x3:3x3" for the puzzle's products
    sgemm_shapes: tuple[str, ...] = ()


_WEIGHTS = re.compile(r"wei_f32::blocked:([a-z]+):")
_OPERANDS = re.compile(r"src_f32::[^ ,]+ wei_f32::[^ ,]+ dst_f32::[^ ,]+")
#: the problem's shape, the field before the last (the time) of an sgemm line
_SHAPE = re.compile(r",(\d+x\d+:\d+x\d+),[^,]*$")
#: how the verbose log writes the shape of the puzzle's products, G Bᵀ and
#: T B: "MxK:KxN" for an M × K times a K × N matrix, here "5x3:3x3"
PUZZLE_SGEMM_SHAPE = "{0}x{1}:{1}x{2}".format(*SEED_T.shape, SEED_B.shape[0])


def onednn_seed_gradient(
    max_cpu_isa: str | None = None, timeout: float = 120, *, custom_ops: bool = True
) -> OneDNNRun:
    """The seed gradient with oneDNN's custom operations on (or off), optionally capped.

    ``custom_ops`` sets ``TF_ENABLE_ONEDNN_OPTS`` (``"1"`` or ``"0"``).
    ``max_cpu_isa`` is a value of oneDNN's ``ONEDNN_MAX_CPU_ISA`` (``"SSE41"``,
    ``"AVX2"``, ``"AVX512_CORE"``, ...): oneDNN then uses no instruction set
    newer than that, as on an older CPU. ``None`` lets it choose for this CPU
    (or keeps a cap already set in the environment). The child first computes
    ``ones((5, 3)) @ tf.transpose(B)`` (Bᵀ written out first), then the
    gradient, with ``tf.config.experimental.enable_op_determinism()``; oneDNN's
    verbose log (``ONEDNN_VERBOSE=1``) gives the instruction set and the
    sgemm calls (on x86 builds, Eigen's contraction calls oneDNN's sgemm too).
    """
    if max_cpu_isa is not None and not (isinstance(max_cpu_isa, str) and max_cpu_isa.isupper()):
        raise ValueError(
            f"max_cpu_isa must be an ONEDNN_MAX_CPU_ISA value such as 'AVX2', got {max_cpu_isa!r}"
        )
    if not isinstance(custom_ops, bool):
        raise TypeError(f"custom_ops must be True or False, got {custom_ops!r}")
    if _simulating_no_onednn():
        raise RuntimeError(f"{WITHOUT_ONEDNN}=1: this TensorFlow is taken to have no oneDNN")
    env = dict(
        os.environ,
        TF_ENABLE_ONEDNN_OPTS="1" if custom_ops else "0",
        TF_CPP_MIN_LOG_LEVEL="3",
        ONEDNN_VERBOSE="1",
    )
    if max_cpu_isa is not None:
        env["ONEDNN_MAX_CPU_ISA"] = max_cpu_isa
    lines = _run_child(env, timeout)
    log = [line for line in lines if line.startswith("onednn_verbose")]
    isa = next((line.split("isa:", 1)[1].strip() for line in log if ",isa:" in line), "unknown")
    sgemm = [line for line in log if ",exec," in line and ",gemm_api," in line]
    layouts = tuple(m.group(1) for line in sgemm for m in [_WEIGHTS.search(line)] if m)
    operands = tuple(m.group(0) for line in sgemm for m in [_OPERANDS.search(line)] if m)
    shapes = tuple(m.group(1) for line in sgemm for m in [_SHAPE.search(line)] if m)
    transposed_first, gradient = _arrays(lines)
    # the longer product travels as its float32 bytes (parsing its numbers as
    # JSON would cost the page a tenth of a second per setting)
    long_bytes = base64.b64decode(json.loads(lines[-1])[3])
    G_long, B_long = long_operands()
    shape = (G_long.shape[0], B_long.shape[0])
    long_product = np.frombuffer(long_bytes, dtype=np.float32).reshape(shape)
    return OneDNNRun(
        gradient, isa, transposed_first, layouts, _switch(lines), operands, long_product, shapes
    )


#: The settings of :func:`onednn_runs`: (custom operations on, ``ONEDNN_MAX_CPU_ISA``).
SETTINGS = ((False, None), (False, "AVX2"), (True, None), (True, "AVX2"))


def setting_name(custom_ops: bool, max_cpu_isa: str | None) -> str:
    """A setting as the oneDNN appendix writes it: ``(TF_ENABLE_ONEDNN_OPTS, cap)``.

    The cap is ``max_cpu_isa``, else the ``ONEDNN_MAX_CPU_ISA`` of this
    environment (which the children inherit), else "—" for none.
    """
    cap = max_cpu_isa or os.environ.get("ONEDNN_MAX_CPU_ISA") or "—"
    return f"({1 if custom_ops else 0}, {cap})"


def onednn_runs(
    settings: Sequence[tuple[bool, str | None]] = SETTINGS, timeout: float = 120
) -> dict[tuple[bool, str | None], OneDNNRun]:
    """:func:`onednn_seed_gradient` for each ``(custom_ops, max_cpu_isa)``, by setting.

    Each setting runs in its own fresh process, all side by side (the
    children spend most of their time importing TensorFlow).
    """
    from concurrent.futures import ThreadPoolExecutor

    settings = [tuple(s) for s in settings]
    for s in settings:
        if len(s) != 2:
            raise ValueError(f"a setting is (custom_ops, max_cpu_isa), got {s!r}")
    with ThreadPoolExecutor(max(1, len(settings))) as pool:
        futures = [
            pool.submit(onednn_seed_gradient, isa, timeout, custom_ops=ops) for ops, isa in settings
        ]
        return {s: f.result() for s, f in zip(settings, futures, strict=True)}


_LAYOUT_WORDS = {
    "ab": ("`ab` (no transpose flag)", "`ab`（无转置标志）"),
    "ba": ("`ba` (transpose flag)", "`ba`（带转置标志）"),
}
#: with the custom operations off, Eigen hands sgemm its own packed blocks,
#: which the log shows as ``ab``
_EIGEN_BLOCKS = ("`ab` (Eigen's packed blocks)", "`ab`（Eigen 的打包块）")
#: the two products each child computes, in the order its sgemm calls log them
_PRODUCTS = (("gradient", "梯度"), ("Bᵀ written out first", "先构造 Bᵀ"))


def runs_table(runs: dict, sums) -> None:
    """Show :func:`onednn_runs`' results as a table, in both editions.

    Two lines per setting ``(TF_ENABLE_ONEDNN_OPTS, ONEDNN_MAX_CPU_ISA)``: one
    for the gradient and one for the product with Bᵀ written out first. Each
    line gives how that product's sgemm received Bᵀ, read from oneDNN's log
    (the gradient's backward product is the last sgemm call, the written-out
    product the first; both must have the puzzle's shape,
    :data:`PUZZLE_SGEMM_SHAPE`, else ValueError; "no sgemm call" when the log
    has none, as in Arm builds), row 0 of the product, and the columns of the
    groupings table that match it: the three groupings and the correctly
    rounded sum (``sums``: one :func:`matgrad.floats.three_term_sums` per
    entry of the row). The first line of a setting also gives the
    instruction set oneDNN allows itself.
    """
    from .floats import GROUPING_NAMES, groupings_consistent_with
    from .tables import markdown_table

    rows, words = [], dict(_PRODUCTS)
    for (ops, isa), run in runs.items():
        if not isinstance(run, OneDNNRun):
            raise TypeError(f"runs must map settings to OneDNNRun, got {type(run).__name__}")
        setting = setting_name(ops, isa)
        known = "—" if run.isa == "unknown" else f"`{run.isa}`"
        layouts = run.sgemm_layouts
        if len(layouts) >= 2:
            # the layouts are attributed by call order: the first and last
            # calls must be the puzzle's products, not blocks of a longer one
            ends = (run.sgemm_shapes[:1], run.sgemm_shapes[-1:])
            if len(run.sgemm_shapes) != len(layouts) or ends != ((PUZZLE_SGEMM_SHAPE,),) * 2:
                raise ValueError(
                    f"{setting}: the first and last sgemm calls are not the puzzle's "
                    f"{PUZZLE_SGEMM_SHAPE} products: {run.sgemm_shapes}"
                )
        for k, (row, product) in enumerate(
            ((run.gradient[0], _PRODUCTS[0][0]), (run.transposed_first[0], _PRODUCTS[1][0]))
        ):
            keys = groupings_consistent_with(row, sums, rounded=True)
            en = "; ".join(GROUPING_NAMES[i][0] for i in keys) or "none of them"
            words[en] = "；".join(GROUPING_NAMES[i][1] for i in keys) or "都不是"
            last = (layouts[-1] if k == 0 else layouts[0]) if len(layouts) >= 2 else None
            if last is None:
                layout = ("no sgemm call", "无 SGEMM 调用")
            elif ops:
                layout = _LAYOUT_WORDS.get(last, (f"`{last}`", f"`{last}`"))
            else:
                layout = _EIGEN_BLOCKS if last == "ab" else (f"`{last}`", f"`{last}`")
            words[layout[0]] = layout[1]
            rows.append(
                [
                    setting if k == 0 else "",
                    known if k == 0 else "",
                    product,
                    layout[0],
                    " ".join(map(str, row)),
                    en,
                ]
            )
    markdown_table(
        [
            "setting",
            "highest instruction set oneDNN allows itself",
            "product",
            "sgemm gets Bᵀ as",
            "row 0 of the product",
            "first table's columns that match it",
        ],
        rows,
        zh_header=[
            "设置",
            "oneDNN 允许自己使用的最高指令集",
            "乘积",
            "SGEMM 收到的 Bᵀ",
            "乘积的第 0 行",
            "第一张表中与之相符的列",
        ],
        zh_words=words,
    )


def onednn_decision(
    start: str | None,
    then: str | None = None,
    timeout: float = 120,
    import_tensorflow: bool = False,
) -> tuple[bool, bool]:
    """What ``IsMklEnabled`` answers in a fresh process, asked twice.

    The process starts with ``TF_ENABLE_ONEDNN_OPTS=start`` (``None``: unset)
    and asks TensorFlow's switch (``IsMklEnabled``, ``tensorflow/core/util/port.cc``);
    then it sets the variable to ``then`` (``None``: leaves it) and asks again.
    TensorFlow decides once per process, so the second answer is the first.
    Only the small extension module that holds the switch is loaded, not the
    whole TensorFlow package (about a second instead of several); the switch
    then decides at its first call instead of during ``import tensorflow``.
    With ``import_tensorflow=True`` the child runs ``import tensorflow`` first,
    as a user's program does (several seconds).
    The child also reports the variable as it was at the second question,
    and a value other than the one asked for is an error.
    """
    for name, value in (("start", start), ("then", then)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string such as '0' or '1', or None, got {value!r}")
    if not isinstance(import_tensorflow, bool):
        raise TypeError(f"import_tensorflow must be True or False, got {import_tensorflow!r}")
    if _simulating_no_onednn():
        return False, False  # IsMklEnabled in a build without oneDNN, whatever the variable
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if start is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = start
    args = ("import" if import_tensorflow else "load",) + (() if then is None else (then,))
    lines = _run_child(env, timeout, _DEFAULT_CHILD, args)
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
    without it (the macOS builds) answers false whatever the variable.
    """
    return onednn_decision("1", timeout=timeout)[0]


def onednn_by_default(timeout: float = 120) -> bool:
    """Whether oneDNN's custom operations are on when ``TF_ENABLE_ONEDNN_OPTS`` is unset.

    TensorFlow decides once, at the first call of its switch, which
    ``import tensorflow`` makes (``IsMklEnabled`` and ``DefaultOneDnnPolicy``
    in ``tensorflow/core/util/port.cc``): a build without oneDNN never turns
    them on; a Linux build with oneDNN turns them on for x86 CPUs with
    AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX and for Arm Neoverse V1; a
    Windows x86 build with oneDNN always. A child process without the
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

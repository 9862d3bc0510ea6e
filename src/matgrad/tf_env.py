"""Running TensorFlow under a chosen environment, in a fresh process.

TensorFlow reads ``TF_ENABLE_ONEDNN_OPTS`` once, at the first call of its
switch ``IsMklEnabled`` (which ``import tensorflow`` makes), and oneDNN reads
``ONEDNN_MAX_CPU_ISA`` once, when it first runs.  To show several settings on
one page, :func:`seed_gradient_in_subprocess` computes the puzzle's
``tape.gradient(Y, T)`` in a child Python with the flag set as asked and
returns the array; :func:`onednn_seed_gradient` does it under one
:class:`Setting` (oneDNN's custom operations on or off, a cap on oneDNN's
instruction set, TensorFlow's test switch for Eigen's own block product, the
number of intra-op threads), also computes two longer products, and reports,
from oneDNN's verbose log, the highest instruction set oneDNN allows itself
and the shape, layout and product of each of its sgemm calls;
:func:`onednn_runs` runs several settings side by side, in one wave of
children that compute only the :data:`PRODUCTS` asked for (the oneDNN
appendix asks for the puzzle's, the page on kernel differences for the
longer ones), and
:func:`setting_name` names a setting as the pages' tables do;
:func:`onednn_decision` asks TensorFlow's switch (``IsMklEnabled``) in a
process started with the variable as given, before and after the variable
changes; :func:`onednn_in_build` reports whether the installed TensorFlow
has oneDNN at all (the macOS builds have none); and
:func:`onednn_by_default` reports whether it turns oneDNN's custom
operations on when the variable is not set. The child's log lines stay in
the child, except that :class:`OneDNNRun` keeps its standard error.

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

# Right after the import, before anything asks TensorFlow's switch
# (IsMklEnabled), the child sets TF_ENABLE_ONEDNN_OPTS to the other value, and
# only then asks: the answer is the start value only if the import had
# already decided. It asks a second time to show the answer stays.
# Op determinism on: each run repeats itself. Before each product it
# prints a marker line (flushed, as oneDNN flushes each verbose line), so that
# every sgemm call of the log is attributed to its product (_PRODUCT_MARK).
# The first line keeps Keras and JAX out of the child (_WITHOUT_KERAS_AND_JAX).
_WITHOUT_KERAS_AND_JAX = """
import sys
sys.modules["keras"] = sys.modules["jax"] = None
"""
_PRODUCT_MARK = "matgrad-product:"
#: the line before each setting's output, when one child computes several settings
_SETTING_MARK = "matgrad-setting:"
# The child's argument is a JSON list of settings, each [threads, {variable:
# value}]: the number of intra-op threads ("0": TensorFlow's default) and the
# environment variables that oneDNN and Eigen read at their first use (the
# instruction-set cap, the test switch). With one setting the child computes
# it itself. With several (on Linux), it imports TensorFlow once and forks
# one process per setting before any operation has run: each starts as fresh
# as a new process would be after ``import tensorflow`` (no operation run,
# oneDNN not started), sets its variables, computes, and writes to a file of
# its own, which the child prints after _SETTING_MARK. TensorFlow's import is
# most of a child's time, so forking saves it for every setting but one.
_CHILD = (
    _WITHOUT_KERAS_AND_JAX
    + """
import base64
import ctypes
import json
import os
import tempfile
import traceback
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port as port
from matgrad.examples import SEED_T, SEED_B
from matgrad.tf_env import PRODUCTS, _PRODUCT_MARK as MARK, _SETTING_MARK
from matgrad.tf_env import long_operands, long_sum_operands

def compute(threads, variables):
    os.environ.update(variables)
    flipped = "0" if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "1" else "1"
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = flipped
    switch = [bool(port.IsMklEnabled()), bool(port.IsMklEnabled())]
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.experimental.enable_op_determinism()
    G, B = tf.ones((5, 3)), tf.constant(SEED_B)
    G_long, B_long = long_operands()

    def longer_gradient():
        T_long = tf.Variable(tf.zeros((G_long.shape[0], B_long.shape[0])))
        with tf.GradientTape() as tape:
            Y_long = T_long @ B_long
        return tape.gradient(Y_long, T_long, output_gradients=tf.constant(G_long))

    def gradient():
        T = tf.Variable(SEED_T)
        with tf.GradientTape() as tape:
            Y = tf.matmul(T, B)
        return tape.gradient(Y, T)

    compute_product = {
        "transposed first": lambda: tf.matmul(G, tf.transpose(B)),
        "longer": lambda: tf.matmul(G_long, B_long, transpose_b=True),
        "longer gradient": longer_gradient,
        "long sums": lambda: tf.matmul(*long_sum_operands(), transpose_b=True),
        "gradient": gradient,
    }
    arrays = {}
    for name in PRODUCTS:  # in this order, and only those asked for
        if name in products:
            print(MARK + name, flush=True)
            x = compute_product[name]().numpy()
            arrays[name] = [x.shape, base64.b64encode(x.tobytes()).decode()]
    print(MARK + "end", flush=True)
    print(json.dumps({"switch": switch, "arrays": arrays}), flush=True)

asked = json.loads(sys.argv[1])
products, settings = asked["products"], asked["settings"]
if len(settings) == 1:
    compute(*settings[0])
    sys.exit()
forked = []
for threads, variables in settings:
    out = tempfile.TemporaryFile()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            os.dup2(out.fileno(), 1)
            compute(threads, variables)
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        ctypes.CDLL(None).fflush(None)  # oneDNN's log goes through C's stdout
        os._exit(status)
    forked.append((pid, out))
failed = 0
for i, (pid, out) in enumerate(forked):
    failed |= os.waitpid(pid, 0)[1]
    out.seek(0)
    print(_SETTING_MARK + str(i))
    print(out.read().decode(), end="")
sys.exit(1 if failed else 0)
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
    env: dict,
    timeout: float,
    script: str = _CHILD,
    args: Sequence[str] = (),
    stderr: list[str] | None = None,
) -> list[str]:
    """The child's standard output, as lines; ``stderr``, a list, receives its standard error."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the TensorFlow child process failed:\n{proc.stderr[-2000:]}")
    if stderr is not None:
        stderr.append(proc.stderr)
    return proc.stdout.strip().splitlines()


#: an array the child did not compute (its product was not asked for)
_NOT_COMPUTED = np.zeros((0, 0), np.float32)


def _arrays(lines: list[str]) -> dict[str, np.ndarray]:
    """The arrays the child printed, by product; they travel as their float32
    bytes (parsing their numbers as JSON would cost a tenth of a second per
    setting for the longer products)."""
    printed = json.loads(lines[-1])["arrays"]
    return {
        name: np.frombuffer(base64.b64decode(data), dtype=np.float32).reshape(shape)
        for name, (shape, data) in printed.items()
    }


def long_operands() -> tuple[np.ndarray, np.ndarray]:
    """The longer product's operands, ``G`` (64 × 300) and ``B`` (300 × 300), float32.

    Random normal, from seeds 0 and 1; the oneDNN appendix multiplies
    ``G @ B.T`` in its kernel, in XLA and in each child of :func:`onednn_runs`.
    """
    G = np.random.default_rng(0).standard_normal((64, 300))
    B = np.random.default_rng(1).standard_normal((300, 300))
    return G.astype(np.float32), B.astype(np.float32)


#: the number of terms of each sum of :func:`long_sum_operands`' product
LONG_SUM_TERMS = 100_000


def long_sum_operands() -> tuple[np.ndarray, np.ndarray]:
    """Operands ``g`` and ``b`` (8 × 100000 each, float32) of a product with long sums.

    Random normal, from seed 0; ``g @ b.T`` has few entries and long sums,
    which Eigen may split among threads. Each child of :func:`onednn_runs`
    multiplies it.
    """
    rng = np.random.default_rng(0)
    g, b = (rng.standard_normal((8, LONG_SUM_TERMS)).astype(np.float32) for _ in range(2))
    return g, b


def _switch(lines: list[str]) -> tuple[bool, ...]:
    return tuple(bool(answer) for answer in json.loads(lines[-1])["switch"])


def _child_args(products: Sequence[str], settings: list) -> tuple[str]:
    """The child's argument: the products to compute, and each setting as
    [threads, {variable: value}]."""
    return (json.dumps({"products": list(products), "settings": settings}),)


def seed_gradient_in_subprocess(onednn: bool, timeout: float = 120) -> np.ndarray:
    """``tape.gradient(SEED_T @ SEED_B, SEED_T)`` computed with oneDNN on or off."""
    if not isinstance(onednn, bool):
        raise TypeError(f"onednn must be True or False, got {onednn!r}")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn else "0", TF_CPP_MIN_LOG_LEVEL="3")
    lines = _run_child(env, timeout, args=_child_args(["gradient"], [[0, {}]]))
    return _arrays(lines)["gradient"]


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
    #: the product each sgemm call belongs to, in order: "transposed first",
    #: "longer", "longer gradient", "long sums" or "gradient" (see :data:`PRODUCTS`)
    sgemm_products: tuple[str, ...] = ()
    #: whether each sgemm call adds its result to the output (the log's
    #: post-op ``sum``) rather than starting it: a sum split into blocks of
    #: terms starts once per partial sum
    sgemm_accumulates: tuple[bool, ...] = ()
    #: ``tape.gradient(T_long @ B_long, T_long, output_gradients=G_long)``: the
    #: longer product again, by the backward MatMul (``grad_a`` set)
    long_gradient: np.ndarray = np.zeros((0, 0), np.float32)
    #: ``g @ b.T`` for :func:`long_sum_operands` (8 × 8, sums of 100000 terms)
    long_sums: np.ndarray = np.zeros((0, 0), np.float32)
    #: the child's standard error, with ``TF_CPP_MIN_LOG_LEVEL=3``: what
    #: TensorFlow logs at import despite it (on Linux, the settings with the
    #: same ``custom_ops`` share one child, one import and so this text)
    stderr: str = ""

    def calls(self, product: str) -> list[int]:
        """The indices of the sgemm calls of one product (see :data:`PRODUCTS`)."""
        if product not in PRODUCTS:
            raise ValueError(f"product must be one of {PRODUCTS}, got {product!r}")
        return [i for i, p in enumerate(self.sgemm_products) if p == product]


#: the products each child computes, in this order (its sgemm calls follow it)
PRODUCTS = ("transposed first", "longer", "longer gradient", "long sums", "gradient")


#: TensorFlow's switch for its tests: "0" sends Eigen's contraction back to
#: Eigen's own block product (route 3 of the oneDNN appendix)
_TEST_SWITCH = "TENSORFLOW_USE_CUSTOM_CONTRACTION_KERNEL"
_WEIGHTS = re.compile(r"wei_f32::blocked:([a-z]+):")
_OPERANDS = re.compile(r"src_f32::[^ ,]+ wei_f32::[^ ,]+ dst_f32::[^ ,]+")
#: the problem's shape, the field before the last (the time) of an sgemm line
_SHAPE = re.compile(r",(\d+x\d+:\d+x\d+),[^,]*$")


def onednn_seed_gradient(
    max_cpu_isa: str | None = None,
    timeout: float = 120,
    *,
    custom_ops: bool = True,
    test_switch: bool = False,
    intra_op_threads: int | None = None,
) -> OneDNNRun:
    """The seed gradient with oneDNN's custom operations on (or off), optionally capped.

    ``custom_ops`` sets ``TF_ENABLE_ONEDNN_OPTS`` (``"1"`` or ``"0"``).
    ``test_switch=True`` sets ``TENSORFLOW_USE_CUSTOM_CONTRACTION_KERNEL=0``,
    TensorFlow's switch for its tests that sends Eigen's contraction back to
    Eigen's own block product (``False`` removes the variable).
    ``intra_op_threads`` (a positive int) sets the number of intra-op threads;
    ``None`` keeps TensorFlow's default.
    ``max_cpu_isa`` is a value of oneDNN's ``ONEDNN_MAX_CPU_ISA`` (``"SSE41"``,
    ``"AVX2"``, ``"AVX512_CORE"``, ...): oneDNN then uses no instruction set
    newer than that; the cap acts on oneDNN alone, the rest of TensorFlow keeps
    the instructions it was compiled for. ``None`` lets it choose for this CPU
    (or keeps a cap already set in the environment). The child computes the
    :data:`PRODUCTS` in order, with ``tf.config.experimental.enable_op_determinism()``:
    ``ones((5, 3)) @ tf.transpose(B)`` (Bᵀ written out first), the longer
    product and its gradient, the product with long sums, and the gradient;
    oneDNN's verbose log (``ONEDNN_VERBOSE=1``) gives the instruction set and
    the sgemm calls of each product (on x86 builds, Eigen's contraction calls
    oneDNN's sgemm too).
    """
    setting = _checked(Setting(custom_ops, max_cpu_isa, test_switch, intra_op_threads))
    return _settings_runs([setting], timeout)[0]


def _checked(setting: Setting) -> Setting:
    """``setting``, once its fields are checked (ValueError, TypeError)."""
    custom_ops, max_cpu_isa, test_switch, intra_op_threads = setting
    if max_cpu_isa is not None and not (isinstance(max_cpu_isa, str) and max_cpu_isa.isupper()):
        raise ValueError(
            f"max_cpu_isa must be an ONEDNN_MAX_CPU_ISA value such as 'AVX2', got {max_cpu_isa!r}"
        )
    for name, value in (("custom_ops", custom_ops), ("test_switch", test_switch)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    if intra_op_threads is not None and (
        isinstance(intra_op_threads, bool) or not isinstance(intra_op_threads, int)
    ):
        raise TypeError(f"intra_op_threads must be an int or None, got {intra_op_threads!r}")
    if intra_op_threads is not None and intra_op_threads < 1:
        raise ValueError(f"intra_op_threads must be at least 1, got {intra_op_threads!r}")
    if _simulating_no_onednn():
        raise RuntimeError(f"{WITHOUT_ONEDNN}=1: this TensorFlow is taken to have no oneDNN")
    return setting


# One process per group of settings that share TF_ENABLE_ONEDNN_OPTS, which
# TensorFlow reads at its import; the child forks a process per setting after
# the import (_CHILD). Where fork is not the usual way to start a process (macOS,
# Windows), each setting gets a child of its own.
_FORK_SETTINGS = sys.platform == "linux"


def _settings_runs(settings: list, timeout: float, products: Sequence[str] | None = None) -> list:
    """:class:`OneDNNRun` of each :class:`Setting`, in order (arguments checked);
    each child computes ``products`` (all :data:`PRODUCTS` when None)."""
    products = PRODUCTS if products is None else products
    from concurrent.futures import ThreadPoolExecutor

    groups: dict = {}
    for i, s in enumerate(settings):
        key = s.custom_ops if _FORK_SETTINGS else i
        groups.setdefault(key, []).append(i)
    with ThreadPoolExecutor(len(groups)) as pool:
        futures = {
            key: pool.submit(_group_and_stderr, [settings[i] for i in members], timeout, products)
            for key, members in groups.items()
        }
        runs = [None] * len(settings)
        for key, members in groups.items():
            lines_of, stderr = futures[key].result()
            for i, lines in zip(members, lines_of, strict=True):
                runs[i] = _parse_run(lines)._replace(stderr="".join(stderr))
    return runs


def _group_and_stderr(
    settings: list, timeout: float, products: Sequence[str]
) -> tuple[list[list[str]], list[str]]:
    """:func:`_group_lines`, and the child's standard error (a list of one text)."""
    stderr: list[str] = []
    return _group_lines(settings, timeout, stderr, products), stderr


def _group_lines(
    settings: list,
    timeout: float,
    stderr: list[str] | None = None,
    products: Sequence[str] = PRODUCTS,
) -> list[list[str]]:
    """The output lines of each setting (all with the same ``custom_ops``), from one child.

    ``stderr``, a list, receives the child's standard error; the child
    computes ``products`` (names from :data:`PRODUCTS`).
    """
    env = dict(
        os.environ,
        TF_ENABLE_ONEDNN_OPTS="1" if settings[0].custom_ops else "0",
        TF_CPP_MIN_LOG_LEVEL="3",
        ONEDNN_VERBOSE="1",
    )
    env.pop(_TEST_SWITCH, None)
    args = []
    for s in settings:
        variables = {"ONEDNN_MAX_CPU_ISA": s.max_cpu_isa} if s.max_cpu_isa is not None else {}
        if s.test_switch:
            variables[_TEST_SWITCH] = "0"
        args.append([s.intra_op_threads or 0, variables])
    lines = _run_child(env, timeout, args=_child_args(products, args), stderr=stderr)
    if len(settings) == 1:
        return [lines]
    marks = [i for i, line in enumerate(lines) if line.startswith(_SETTING_MARK)]
    if len(marks) != len(settings):
        raise RuntimeError(
            f"the TensorFlow child printed {len(marks)} settings, not {len(settings)}"
        )
    return [lines[m + 1 : n] for m, n in zip(marks, [*marks[1:], len(lines)], strict=True)]


def _parse_run(lines: list[str]) -> OneDNNRun:
    """A :class:`OneDNNRun` from one setting's output lines."""
    isa = next((line.split("isa:", 1)[1].strip() for line in lines if ",isa:" in line), "unknown")
    product, sgemm = None, []  # (product, log line) for each sgemm call
    for line in lines:
        if line.startswith(_PRODUCT_MARK):
            product = line[len(_PRODUCT_MARK) :]
        elif line.startswith("onednn_verbose") and ",exec," in line and ",gemm_api," in line:
            sgemm.append((product, line))

    def field(pattern: re.Pattern, group: int) -> tuple[str, ...]:
        found = (pattern.search(line) for _, line in sgemm)
        return tuple(m.group(group) if m else "" for m in found)

    arrays = _arrays(lines)
    return OneDNNRun(
        arrays.get("gradient", _NOT_COMPUTED),
        isa,
        arrays.get("transposed first", _NOT_COMPUTED),
        field(_WEIGHTS, 1),
        _switch(lines),
        field(_OPERANDS, 0),
        arrays.get("longer", _NOT_COMPUTED),
        field(_SHAPE, 1),
        tuple(p for p, _ in sgemm),
        tuple("attr-post-ops:sum" in line for _, line in sgemm),
        arrays.get("longer gradient", _NOT_COMPUTED),
        arrays.get("long sums", _NOT_COMPUTED),
    )


class Setting(NamedTuple):
    """The environment of one child of :func:`onednn_runs`."""

    custom_ops: bool  #: ``TF_ENABLE_ONEDNN_OPTS`` 1 (True) or 0
    max_cpu_isa: str | None = None  #: ``ONEDNN_MAX_CPU_ISA``; None: no cap
    #: ``TENSORFLOW_USE_CUSTOM_CONTRACTION_KERNEL=0``: Eigen's own block product
    test_switch: bool = False
    intra_op_threads: int | None = None  #: None: TensorFlow's default


#: The default settings of :func:`onednn_runs`.
SETTINGS = (Setting(False), Setting(False, "AVX2"), Setting(True), Setting(True, "AVX2"))


def setting_name(
    custom_ops: bool,
    max_cpu_isa: str | None = None,
    test_switch: bool = False,
    intra_op_threads: int | None = None,
) -> str:
    """A setting as the oneDNN appendix writes it: ``(TF_ENABLE_ONEDNN_OPTS, cap)``.

    The cap is ``max_cpu_isa``, else the ``ONEDNN_MAX_CPU_ISA`` of this
    environment (which the children inherit), else "default" for none; then
    " + test switch" and " + 1 thread" (or " + n threads") when set, e.g.
    ``setting_name(*Setting(False, test_switch=True))`` is "(0, default) + test switch".
    Both editions use this name (the Chinese prose writes it as code).
    """
    cap = max_cpu_isa or os.environ.get("ONEDNN_MAX_CPU_ISA") or "default"
    name = f"({1 if custom_ops else 0}, {cap})"
    if test_switch:
        name += " + test switch"
    if intra_op_threads is not None:
        name += f" + {intra_op_threads} thread{'' if intra_op_threads == 1 else 's'}"
    return name


def onednn_runs(
    settings: Sequence[Sequence] = SETTINGS,
    timeout: float = 120,
    *,
    products: Sequence[str] = PRODUCTS,
) -> dict[Setting, OneDNNRun]:
    """:func:`onednn_seed_gradient` for each :class:`Setting`, by setting.

    A setting is a :class:`Setting` or a tuple of its fields, ``(custom_ops,
    max_cpu_isa)`` at least. Each setting runs in a process of its own, all
    side by side; on Linux, the settings with the same ``custom_ops`` share
    one ``import tensorflow``, forked before any operation runs (``_CHILD``).
    ``products``, names from :data:`PRODUCTS`, says which products each
    child computes (in the order of :data:`PRODUCTS`); the fields of
    :class:`OneDNNRun` for the others hold empty arrays. A page that needs
    only the puzzle's products, or only the longer ones, asks for those.
    """
    products = _checked_products(products)
    for s in settings:
        if not isinstance(s, Sequence) or not 2 <= len(s) <= len(Setting._fields):
            raise ValueError(
                f"a setting is (custom_ops, max_cpu_isa[, test_switch[, intra_op_threads]]), "
                f"got {s!r}"
            )
    settings = [_checked(Setting(*s)) for s in settings]
    if not settings:
        return {}
    return dict(zip(settings, _settings_runs(settings, timeout, products), strict=True))


def _checked_products(products) -> tuple[str, ...]:
    """``products`` as a tuple, once checked: a non-empty sequence of
    distinct names from :data:`PRODUCTS` (TypeError, ValueError)."""
    if isinstance(products, str) or not isinstance(products, Sequence):
        raise TypeError(
            f"products must be a list or tuple of names from {PRODUCTS}, got {products!r}"
        )
    unknown = [p for p in products if p not in PRODUCTS]
    if unknown or not products or len(set(products)) != len(products):
        raise ValueError(
            f"products must name distinct products from {PRODUCTS}, at least one, "
            f"got {tuple(products)!r}"
        )
    return tuple(products)


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

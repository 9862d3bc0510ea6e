"""One checker for a gradient rule: :func:`check_rule`.

Given a TensorFlow function, a NumPy rule (a vector-Jacobian product in
TensorFlow's convention) and inputs, :func:`check_rule` compares the rule
with three references, the checks the book uses for ``_MatMulGrad``:

(a) ``tape.gradient`` with a random ``output_gradients`` G;
(b) the numerical Jacobian of ``tf.test.compute_gradient`` (TensorFlow's own
    gradient checker, central differences in the inputs' dtype with step
    ``2**-10`` in single and ``2**-20`` in double precision), against the
    rule's Jacobian, assembled from the rule applied to every unit cotangent;
(c) central differences in float64 (complex128) of the real loss
    ``Re<G, f(x)>``, one entry (and, for complex inputs, one imaginary part)
    at a time (:func:`matgrad.jacobian.numeric_jacobian`).

Each difference is the largest absolute difference divided by
``max(1, largest |entry| of the reference)``, so large gradients are judged
relatively.  The result, :class:`RuleCheck`, renders as a Markdown table row
(:func:`check_table` makes the table).  TensorFlow is imported when a check
runs, not when this module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._checks import as_array, check_callable, check_same_dtype
from .jacobian import numeric_jacobian

#: Default tolerances: (tape, compute_gradient, central differences) by precision.
TOLERANCES = {"single": (1e-4, 1e-3, 1e-4), "double": (1e-10, 1e-5, 1e-7)}
COLUMNS = ("tape", "compute_gradient", "central diff.")


def _precision(dtype) -> str:
    return (
        "single" if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64)) else "double"
    )


def _scaled_diff(ours, reference) -> float:
    ours, reference = np.asarray(ours), np.asarray(reference)
    scale = max(1.0, float(np.abs(reference).max(initial=0.0)))
    return float(np.abs(ours - reference).max(initial=0.0)) / scale


@dataclass
class RuleCheck:
    """The largest (scaled) differences of a rule against the three references."""

    name: str
    dtype: str
    shapes: str
    tape: float
    compute_gradient: float
    finite_diff: float
    tolerances: tuple = field(default=(0.0, 0.0, 0.0))

    @property
    def diffs(self) -> tuple:
        return (self.tape, self.compute_gradient, self.finite_diff)

    @property
    def passed(self) -> tuple:
        """One bool per reference: is the difference within its tolerance?"""
        return tuple(d <= t for d, t in zip(self.diffs, self.tolerances, strict=True))

    @property
    def ok(self) -> bool:
        return all(self.passed)

    def cells(self) -> list[str]:
        """The row's cells: name, dtype, shapes and the three differences."""
        cells = [self.name, self.dtype, self.shapes]
        cells += [
            f"{d:.1e}" + ("" if p else " ✗") for d, p in zip(self.diffs, self.passed, strict=True)
        ]
        return cells

    def row(self) -> str:
        return "| " + " | ".join(self.cells()) + " |"

    def _repr_markdown_(self) -> str:
        return check_table([self])


def check_table(checks) -> str:
    """A Markdown table, one row per :class:`RuleCheck`; ✗ marks a difference over its tolerance."""
    checks = list(checks)
    for c in checks:
        if not isinstance(c, RuleCheck):
            raise TypeError(f"check_table needs RuleCheck objects, got {type(c).__name__}")
    head = "| rule | dtype | shapes | " + " | ".join(COLUMNS) + " |"
    return "\n".join([head, "|---|---|---|---:|---:|---:|"] + [c.row() for c in checks])


#: The Chinese column titles of :func:`show_checks`, in the order of its header.
CHECK_HEADER_ZH = ("规则", "数据类型", "形状", "梯度带", "compute_gradient", "中心差分")


def show_checks(checks, *, zh_words=None) -> None:
    """Display the table of :func:`check_table` in both editions of the book.

    The English table is the one :func:`check_table` writes; its Chinese twin
    (:func:`matgrad.tables.markdown_table`) has Chinese column titles and
    gives each word cell (a rule's name) the Chinese in ``zh_words``
    ({English: Chinese}); a name without an entry stays as it is (code).
    Raises TypeError for anything but RuleCheck objects.
    """
    from .tables import markdown_table

    checks = list(checks)
    check_table(checks)  # refuses anything but RuleCheck objects
    if zh_words is not None and not isinstance(zh_words, dict):
        raise TypeError(
            f"zh_words must be a dict {{English: Chinese}}, got {type(zh_words).__name__}"
        )
    rows = [c.cells() for c in checks]
    header = ["rule", "dtype", "shapes", *COLUMNS]
    markdown_table(header, rows, zh_header=list(CHECK_HEADER_ZH), zh_words=zh_words, align="lllrrr")


def _tf():
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def _as_tuple(grads, n: int, shapes) -> tuple:
    if n == 1 and not isinstance(grads, (tuple, list)):
        grads = (grads,)
    grads = tuple(grads)
    if len(grads) != n:
        raise ValueError(f"rule returned {len(grads)} gradient(s) for {n} input(s)")
    for k, (g, shape) in enumerate(zip(grads, shapes, strict=True)):
        if np.shape(g) != shape:
            raise ValueError(
                f"rule's gradient {k} has shape {np.shape(g)}, but input {k} has shape {shape}"
            )
    return tuple(np.asarray(g) for g in grads)


def _random_like(rng, shape, dtype) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x).astype(dtype)


def _rule_jacobian(rule, inputs, k, y_shape, y_dtype) -> np.ndarray:
    """The rule's Jacobian for input ``k``, laid out as ``tf.test.compute_gradient`` lays it out.

    Row ``r`` is the gradient for the ``r``-th unit cotangent (real and
    imaginary units interleaved for a complex output), viewed as reals.
    """
    real = np.dtype(y_dtype).kind == "c"
    size = int(np.prod(y_shape, dtype=int)) * (2 if real else 1)
    rows = []
    for r in range(size):
        v = np.zeros(y_shape, dtype=y_dtype)
        v.reshape(-1).view(np.zeros(0, y_dtype).real.dtype)[r] = 1
        g = _as_tuple(rule(*inputs, v), len(inputs), [x.shape for x in inputs])[k]
        rows.append(
            np.ascontiguousarray(g, dtype=inputs[k].dtype)
            .reshape(-1)
            .view(np.zeros(0, inputs[k].dtype).real.dtype)
        )
    return np.array(rows)


def _central_differences(tf_fn, inputs, v, k) -> np.ndarray:
    """Gradient of Re<v, f(x)> for input ``k`` by central differences, in double precision."""
    tf = _tf()
    complex_ = np.iscomplexobj(inputs[k])
    wide = [x.astype(np.complex128 if np.iscomplexobj(x) else np.float64) for x in inputs]
    v = v.astype(np.complex128 if np.iscomplexobj(v) else np.float64)

    def loss(x):
        args = [tf.constant(x if j == k else w) for j, w in enumerate(wide)]
        return float(np.real(np.vdot(v, np.asarray(tf_fn(*args)))))

    x = wide[k]
    if not complex_:
        return numeric_jacobian(loss, x)
    d_re = numeric_jacobian(lambda r: loss(r + 1j * x.imag), x.real)
    d_im = numeric_jacobian(lambda i: loss(x.real + 1j * i), x.imag)
    return d_re + 1j * d_im


def check_rule(
    tf_fn, rule, inputs, *, name: str | None = None, seed: int = 0, tolerances: tuple | None = None
) -> RuleCheck:
    """Check the NumPy gradient ``rule`` of ``tf_fn`` at ``inputs`` three ways.

    ``tf_fn(*tensors)`` returns one tensor; ``rule(*inputs, grad)`` returns
    the gradient for each input (a tuple, or one array for one input) in
    TensorFlow's convention.  ``inputs`` is a sequence of float or complex
    arrays of one dtype.  ``tolerances`` is ``(tape, compute_gradient,
    central differences)``; the default depends on the precision (see
    ``TOLERANCES``).  Returns a :class:`RuleCheck`.
    """
    check_callable(tf_fn, "tf_fn")
    check_callable(rule, "rule")
    if isinstance(inputs, np.ndarray) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(
            f"inputs must be a non-empty list or tuple of arrays, got {type(inputs).__name__}"
        )
    inputs = [as_array(x, f"inputs[{k}]") for k, x in enumerate(inputs)]
    check_same_dtype(**{f"inputs[{k}]": x for k, x in enumerate(inputs)})
    dtype = inputs[0].dtype
    if tolerances is None:
        tolerances = TOLERANCES[_precision(dtype)]
    tolerances = tuple(float(t) for t in tolerances)
    if len(tolerances) != 3 or not all(t >= 0 for t in tolerances):
        raise ValueError(
            f"tolerances must be three non-negative numbers "
            f"(tape, compute_gradient, central differences), got {tolerances}"
        )
    tf = _tf()
    rng = np.random.default_rng(seed)

    # (a) the tape, with a random upstream gradient
    tensors = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = tf_fn(*tensors)
    y_shape, y_dtype = tuple(y.shape), y.dtype.as_numpy_dtype
    v = _random_like(rng, y_shape, y_dtype)
    theirs = tape.gradient(y, tensors, output_gradients=tf.constant(v))
    ours = _as_tuple(rule(*inputs, v), len(inputs), [x.shape for x in inputs])
    d_tape = max(
        _scaled_diff(g, np.zeros_like(g) if t is None else t.numpy())
        for g, t in zip(ours, theirs, strict=True)
    )

    # (b) TensorFlow's gradient checker: its numerical Jacobian against the rule's
    delta = 2.0**-10 if _precision(dtype) == "single" else 2.0**-20
    _, numerical = tf.test.compute_gradient(tf_fn, inputs, delta=delta)
    d_cg = max(
        _scaled_diff(_rule_jacobian(rule, inputs, k, y_shape, y_dtype), numerical[k])
        for k in range(len(inputs))
    )

    # (c) central differences of Re<G, f(x)> in double precision
    d_fd = max(
        _scaled_diff(ours[k], _central_differences(tf_fn, inputs, v, k)) for k in range(len(inputs))
    )

    shapes = ", ".join(str(x.shape) for x in inputs)
    return RuleCheck(
        name or getattr(rule, "__name__", "rule"),
        np.dtype(dtype).name,
        shapes,
        d_tape,
        d_cg,
        d_fd,
        tolerances,
    )

"""TensorFlow's gradient registry: which rule runs for an op type.

No public TensorFlow 2.21 function reads the registry, so these helpers use
the internal ``tensorflow.python.framework.ops.gradient_registry``; its name
belongs to TensorFlow 2.21 and may change.  TensorFlow is imported on first
use only.
"""

from __future__ import annotations

_SKIPPED = ("Placeholder", "Identity", "Const", "NoOp")


def _check_op_type(op_type) -> None:
    if not isinstance(op_type, str):
        raise TypeError(f"op_type must be a str, not {type(op_type).__name__}")
    if not op_type:
        raise ValueError("op_type must not be empty")


def registered_rule(op_type: str):
    """The function registered for ``op_type``'s gradient (``None``: not differentiable).

    Raises ``LookupError`` when nothing is registered for ``op_type``.
    """
    _check_op_type(op_type)
    from tensorflow.python.framework import ops

    return ops.gradient_registry.lookup(op_type)


def gradient_status(op_type: str) -> str:
    """Whether ``op_type`` has a registered gradient, or why it has none."""
    try:
        fn = registered_rule(op_type)
    except LookupError:
        return "no gradient registered"
    return "not differentiable" if fn is None else "gradient registered"


def op_types(fn, *shapes, dtype=None) -> dict:
    """The op types that ``fn`` runs when traced at ``shapes``, with each one's gradient status.

    ``shapes`` gives one shape (a tuple or an int) per argument; ``dtype`` is a
    TensorFlow dtype, float64 by default.  Placeholders, identities, constants
    and no-ops are left out.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    import tensorflow as tf

    for shape in shapes:
        dims = (shape,) if isinstance(shape, int) else shape
        if not isinstance(dims, tuple) or not all(isinstance(d, int) for d in dims):
            raise TypeError(f"each shape must be an int or a tuple of ints, not {shape!r}")
        if any(d < 0 for d in dims):
            raise ValueError(f"shape must not have negative sizes, got {shape!r}")
    dtype = tf.float64 if dtype is None else tf.as_dtype(dtype)
    specs = [tf.TensorSpec(s, dtype) for s in shapes]
    graph = tf.function(fn).get_concrete_function(*specs).graph
    return {
        op.type: gradient_status(op.type)
        for op in graph.get_operations()
        if op.type not in _SKIPPED
    }

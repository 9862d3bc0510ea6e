"""Count the scalar multiplications that array products make.

Work is measured in this book by counts, not timings: a count is the same on
every machine. The two products below do what NumPy's ``@`` and ``*`` do and
add the number of scalar multiplications they make to every open counter::

    with MultiplicationCounter() as count:
        matmul(np.ones((2, 3)), np.ones((3, 4)))     # 2 * 3 * 4 = 24
    count.total                                      # 24

A product of an (m, k) and a (k, n) matrix makes m*k*n multiplications (times
the number of matrices in a broadcast batch); an entrywise product makes one
per entry of the broadcast result. A complex multiplication counts as one.
:mod:`matgrad.tape` uses these two functions for its forward and backward
products, so a counter open around a gradient counts both passes.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

_active: list[MultiplicationCounter] = []


class MultiplicationCounter:
    """Context manager: counts the multiplications made by :func:`matmul` and :func:`multiply`.

    ``total`` is the sum; ``by_op`` splits it into ``"matmul"`` and ``"multiply"``.
    Counters nest: an inner counter's multiplications count in the outer one too.
    """

    def __init__(self):
        self.by_op = {"matmul": 0, "multiply": 0}

    @property
    def total(self) -> int:
        return sum(self.by_op.values())

    def __enter__(self) -> MultiplicationCounter:
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)

    def __repr__(self):
        return f"MultiplicationCounter(total={self.total}, by_op={self.by_op})"


def _add(op: str, n: int) -> None:
    for counter in _active:
        counter.by_op[op] += n


def matmul_multiplications(a_shape, b_shape) -> int:
    """Multiplications of ``a @ b`` for operands of these shapes (NumPy's rules).

    A 1-D operand is a row (left) or a column (right), as in ``np.matmul``;
    leading axes broadcast. Raises ValueError for rank 0 or mismatched inner
    or batch axes, naming both shapes.
    """
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise ValueError(f"matmul needs operands of rank >= 1, got shapes {a_shape} and {b_shape}")
    a2 = (1,) + a_shape if len(a_shape) == 1 else a_shape
    b2 = b_shape + (1,) if len(b_shape) == 1 else b_shape
    if a2[-1] != b2[-2]:
        raise ValueError(
            f"matmul: the inner axes differ, a has shape {a_shape} and b has shape {b_shape}"
        )
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: the batch axes do not broadcast, a has shape {a_shape} "
            f"and b has shape {b_shape}"
        ) from None
    return math.prod(batch) * a2[-2] * a2[-1] * b2[-1]


def matmul(a, b) -> np.ndarray:
    """``a @ b``, counted."""
    a, b = np.asarray(a), np.asarray(b)
    n = matmul_multiplications(a.shape, b.shape)
    out = a @ b
    _add("matmul", n)
    return out


def multiply(a, b) -> np.ndarray:
    """``a * b`` (broadcasting), counted: one multiplication per entry of the result."""
    out = np.multiply(a, b)
    _add("multiply", int(np.size(out)))
    return out


def needed_operations(graph) -> list:
    """The operations of a traced TensorFlow graph that its outputs need.

    ``graph`` is a ``FuncGraph`` (``tf.function(f).get_concrete_function().graph``).
    An operation is needed when ``graph.outputs`` depend on it, through inputs
    or control inputs; TensorFlow prunes the others before it runs the graph.
    Returned in the graph's order. Raises TypeError for an object without
    ``outputs`` and ``get_operations``.
    """
    if not (hasattr(graph, "outputs") and hasattr(graph, "get_operations")):
        raise TypeError(f"needed_operations needs a traced graph, got {type(graph).__name__}")
    todo, needed = [t.op for t in graph.outputs], set()
    while todo:
        op = todo.pop()
        if op not in needed:
            needed.add(op)
            todo += [t.op for t in op.inputs] + list(op.control_inputs)
    return [op for op in graph.get_operations() if op in needed]


def graph_matmul_shapes(graph) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Operand shapes of each ``MatMul`` in a traced TensorFlow graph that its outputs need.

    ``graph`` is a ``FuncGraph`` (``tf.function(f).get_concrete_function().graph``)
    with static shapes. Only :func:`needed_operations` are listed, and only at
    the graph's top level: a ``MatMul`` inside a called function
    (``PartitionedCall``) or a loop body (``While``) is not listed, so a route
    that keeps its products there is undercounted.
    Each entry is the pair of operand shapes as the op multiplies them
    (``transpose_a``/``transpose_b`` applied), in the order of the ops' names.
    Raises TypeError if ``graph`` is not a graph, and ValueError naming the op
    if a shape is not static.
    """
    if not (hasattr(graph, "outputs") and hasattr(graph, "get_operations")):
        raise TypeError(f"graph must be a traced FuncGraph, got {type(graph).__name__}")
    pairs = []
    for op in sorted(
        (op for op in needed_operations(graph) if op.type == "MatMul"), key=lambda op: op.name
    ):
        pairs.append(_operand_shapes(op))
    return pairs


def _operand_shapes(op) -> tuple:
    """A traced ``MatMul``'s operand shapes as it multiplies them (its
    ``transpose_a``/``transpose_b`` applied); ValueError naming the op if a
    shape is not static."""
    shapes = []
    for t, flag in zip(op.inputs, ("transpose_a", "transpose_b"), strict=True):
        if t.shape.rank is None or None in t.shape.as_list():
            raise ValueError(f"graph: MatMul {op.name!r} has an operand of shape {t.shape}")
        shape = tuple(t.shape.as_list())
        shapes.append(shape[::-1] if op.get_attr(flag) else shape)
    return tuple(shapes)


def graph_matmul_multiplications(graph) -> list[int]:
    """Multiplications of each ``MatMul`` in a traced TensorFlow graph that its outputs need.

    Reads the top-level graph only, as :func:`graph_matmul_shapes` does. One
    entry per pair of :func:`graph_matmul_shapes`: :func:`matmul_multiplications`
    of the operands as the op multiplies them. Raises ValueError naming the op if a
    shape is not static.
    """
    return [matmul_multiplications(*pair) for pair in graph_matmul_shapes(graph)]


def nested_matmul_multiplications(graph, name_part: str = "") -> list[int]:
    """Multiplications of every ``MatMul`` in a traced graph and in the functions it calls.

    Unlike :func:`graph_matmul_multiplications`, this lists every ``MatMul``,
    needed by the outputs or not, and descends into the functions that the
    graph's operations call: a ``PartitionedCall``'s ``f``, a ``While``'s
    ``body`` and ``cond``, an ``If``'s branches (read from the graph's private
    ``_functions``, TensorFlow 2.21). Only ops whose name contains
    ``name_part`` are listed (``"/pfor/"``: the products that ``pfor``
    batched). Each entry is :func:`matmul_multiplications` of the operands
    with ``transpose_a``/``transpose_b`` applied, in the graph's order, a
    called function's products where the call is. Raises TypeError if
    ``graph`` is not a graph, and ValueError naming the op if a shape is not
    static.
    """
    if not hasattr(graph, "get_operations"):
        raise TypeError(f"graph must be a traced FuncGraph, got {type(graph).__name__}")
    functions = getattr(graph, "_functions", {})
    found = []
    for op in graph.get_operations():
        if op.type == "MatMul" and name_part in op.name:
            found.append(matmul_multiplications(*_operand_shapes(op)))
        for attr in ("f", "body", "cond", "then_branch", "else_branch"):
            try:
                name = op.get_attr(attr).name
            except (ValueError, AttributeError):
                continue
            if name in functions:
                found += nested_matmul_multiplications(functions[name].graph, name_part)
    return found


def eager_matmul_multiplications(executed) -> list[int]:
    """Multiplications of each ``MatMul`` in a list of :class:`EagerOp` (from :func:`eager_ops`).

    The operands' shapes with the ops' ``transpose_a``/``transpose_b`` applied,
    in the order the ops ran; other op types are skipped.
    """
    found = []
    for op in executed:
        if op.type != "MatMul":
            continue
        shapes = []
        for shape, flag in zip(op.input_shapes, ("transpose_a", "transpose_b"), strict=True):
            value = op.attrs.get(flag, False)
            shapes.append(shape[::-1] if bool(getattr(value, "b", value)) else shape)
        found.append(matmul_multiplications(*shapes))
    return found


class EagerOp(NamedTuple):
    """One operation that TensorFlow executed eagerly: its type, the shapes of
    its inputs and its attributes ({name: value})."""

    type: str
    input_shapes: tuple
    attrs: dict


@contextmanager
def eager_ops():
    """Context manager: the list of operations TensorFlow executes eagerly in its block.

    Yields a list that fills with one :class:`EagerOp` per eagerly executed
    operation, in order (operations built into a graph, for example by a
    ``tf.function`` being traced, are not listed). It uses TensorFlow's op
    callbacks (``tensorflow.python.framework.op_callbacks``), an internal
    module of TensorFlow 2.21 that may change; the callback is removed when the
    block ends, even on an exception.
    """
    from tensorflow.python.framework import op_callbacks

    executed: list[EagerOp] = []

    def record(op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if graph is None:
            pairs = dict(zip(attrs[::2], attrs[1::2], strict=True)) if attrs else {}
            shapes = tuple(tuple(t.shape) for t in inputs)
            executed.append(EagerOp(op_type, shapes, pairs))

    op_callbacks.add_op_callback(record)
    try:
        yield executed
    finally:
        op_callbacks.remove_op_callback(record)


def executed_kernels(run, op_type: str = "MatMul") -> int:
    """How many ``op_type`` kernels TensorFlow executes while ``run()`` runs.

    Counts eager operations and those inside compiled functions alike (the
    JVPs of ``tf.autodiff.ForwardAccumulator`` run inside functions, which an
    eager op callback does not see): it runs ``run()`` under TensorFlow's
    profiler and counts the events whose name ends in ``op_type``
    (``EagerLocalExecute: MatMul`` for an eager op, ``<node name>:MatMul``
    inside a function). The profiler's file is read with
    ``tensorflow.tsl.profiler.protobuf.xplane_pb2``, which is not public API
    (TensorFlow 2.21). Names are those of the kernels that ran: with oneDNN's
    custom operations on, a ``MatMul`` inside a function runs as
    ``_MklMatMul`` (the book's pages turn them off). Raises TypeError if
    ``run`` is not callable or
    ``op_type`` is not a non-empty string.
    """
    if not callable(run):
        raise TypeError(f"run must be callable, got {type(run).__name__}")
    if not isinstance(op_type, str) or not op_type:
        raise TypeError(f"op_type must be a non-empty string such as 'MatMul', got {op_type!r}")
    return len(executed_kernel_names(run, op_type))


def executed_kernel_names(run, op_type: str | None = None) -> list[str]:
    """The profiler's event names while ``run()`` runs, in the order recorded.

    The names that ``executed_kernels`` counts: ``EagerLocalExecute: MatMul``
    for an eager op, ``<node name>:MatMul`` for a kernel inside a function, so
    a page can tell which node of a graph ran (a kernel inside a function that
    the graph calls is named ``<call node>/<node in the function>:MatMul``).
    With ``op_type`` (``"MatMul"``), only the names of the ``op_type`` kernels.
    Read with TensorFlow's profiler (not public API, TensorFlow 2.21). Raises
    TypeError if ``run`` is not callable or ``op_type`` is given and is not a
    non-empty string.
    """
    import glob
    import tempfile

    if not callable(run):
        raise TypeError(f"run must be callable, got {type(run).__name__}")
    if op_type is not None and (not isinstance(op_type, str) or not op_type):
        raise TypeError(f"op_type must be a non-empty string such as 'MatMul', got {op_type!r}")
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            run()
        finally:
            tf.profiler.experimental.stop()
        (path,) = glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)
        with open(path, "rb") as file:
            space = xplane_pb2.XSpace.FromString(file.read())
    names = [
        plane.event_metadata[event.metadata_id].name
        for plane in space.planes
        for line in plane.lines
        for event in line.events
    ]
    if op_type is not None:
        names = [name for name in names if name.rsplit(":", 1)[-1].strip() == op_type]
    return names


def jaxpr_products(f, *args) -> list[tuple[tuple[tuple[int, ...], ...], int]]:
    """The matrix products (``dot_general``) in JAX's traced program of ``f(*args)``.

    One entry per product, in program order: the shapes of its operands and
    its multiplications (entries of the output times the length of the
    contracted axes). Reads ``jax.make_jaxpr(f)(*args)``'s top-level equations,
    so a product inside a nested call is not listed. Raises TypeError if ``f``
    is not callable.
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    import jax

    found = []
    for eqn in jax.make_jaxpr(f)(*args).jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            (contracted, _), _ = eqn.params["dimension_numbers"]
            shapes = tuple(tuple(v.aval.shape) for v in eqn.invars)
            terms = math.prod(shapes[0][d] for d in contracted)
            found.append((shapes, math.prod(eqn.outvars[0].aval.shape) * terms))
    return found

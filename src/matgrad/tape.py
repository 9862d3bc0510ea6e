"""A reverse-mode recorder over NumPy, small enough to read in one sitting.

It behaves like ``tf.GradientTape`` for the handful of operations the book
needs, so you can see where the ones are seeded::

    with Tape() as tape:
        T = tape.watch(SEED_T)
        Y = T @ SEED_B
    tape.gradient(Y, T)          # the gradient of sum(Y): every row is B's row sums

Each operation records its output, its inputs and a *VJP rule*: a function
that turns the gradient flowing into the output into gradients for the
inputs.  :meth:`Tape.gradient` walks the records backwards.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array
from .counting import matmul as _mm  # counted products (matgrad.counting)
from .counting import multiply as _mul

_active: list[Tape] = []


class Variable:
    """An array that the active tape can follow through operations."""

    __array_priority__ = 1000  # make `ndarray @ Variable` call our __rmatmul__

    def __init__(self, value):
        self.value = as_array(value, "value")

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    ndim = property(lambda self: self.value.ndim)

    def __repr__(self):
        return f"Variable({self.value!r})"

    # Operators delegate to the functions below, which record on the tape.
    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def sum(self, axis=None):
        return reduce_sum(self, axis)

    def reshape(self, *shape):
        return reshape(self, shape[0] if len(shape) == 1 else shape)

    T = property(lambda self: transpose(self))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # `ndarray @ Variable` and friends arrive here: record the ones we know.
        known = {np.matmul: matmul, np.add: add, np.subtract: subtract, np.multiply: multiply}
        if method == "__call__" and ufunc in known and len(inputs) == 2 and not kwargs:
            return known[ufunc](*inputs)
        raise TypeError(
            f"the Tape does not know the operation {ufunc.__name__!r}; it records "
            "matmul (@), add (+), subtract (-), multiply (*), sum, transpose (.T) and reshape"
        )

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(
            f"the Tape does not know the operation {func.__name__!r}; it records "
            "matmul (@), add (+), subtract (-), multiply (*), sum, transpose (.T) and reshape"
        )


def _value(x) -> np.ndarray:
    return x.value if isinstance(x, Variable) else as_array(x, "operand")


def _unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape`` (the sum broadcasting owes)."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _record(value, inputs, vjp) -> Variable:
    out = Variable(value)
    for tape in _active:
        tape._records.append((out, inputs, vjp))
    return out


def matmul(a, b) -> Variable:
    A, B = _value(a), _value(b)
    # VJP of Y = A @ B: dA = G @ B^H, dB = A^H @ G (the rule of chapter 04).
    return _record(_mm(A, B), (a, b), lambda g: (_mm(g, B.conj().T), _mm(A.conj().T, g)))


def add(a, b) -> Variable:
    A, B = _value(a), _value(b)
    return _record(A + B, (a, b), lambda g: (_unbroadcast(g, A.shape), _unbroadcast(g, B.shape)))


def subtract(a, b) -> Variable:
    A, B = _value(a), _value(b)
    return _record(A - B, (a, b), lambda g: (_unbroadcast(g, A.shape), -_unbroadcast(g, B.shape)))


def multiply(a, b) -> Variable:
    A, B = _value(a), _value(b)
    return _record(
        _mul(A, B),
        (a, b),
        lambda g: (
            _unbroadcast(_mul(g, B.conj()), A.shape),
            _unbroadcast(_mul(g, A.conj()), B.shape),
        ),
    )


def reduce_sum(a, axis=None) -> Variable:
    A = _value(a)

    def vjp(g):
        # Every summed entry gets the same upstream value: broadcast g back.
        if axis is not None:
            g = np.expand_dims(g, axis)
        return (np.broadcast_to(g, A.shape).copy(),)

    return _record(A.sum(axis=axis), (a,), vjp)


def transpose(a) -> Variable:
    A = _value(a)
    return _record(A.T, (a,), lambda g: (g.T,))


def reshape(a, shape) -> Variable:
    A = _value(a)
    return _record(A.reshape(shape), (a,), lambda g: (g.reshape(A.shape),))


class Tape:
    """Records operations on :class:`Variable` objects while it is open."""

    def __init__(self):
        self._records: list = []

    def __enter__(self) -> Tape:
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)

    def watch(self, x) -> Variable:
        """Start following ``x`` (an array, or a Variable) and return it as a Variable."""
        if isinstance(x, Variable):
            return x
        arr = np.asarray(x)
        if arr.dtype.kind not in "fc":
            raise TypeError(
                f"Tape.watch needs a floating or complex array, got {arr.dtype} with shape "
                f"{arr.shape}: an integer has no derivative"
            )
        return Variable(arr)

    def gradient(self, target, sources, output_gradients=None):
        """Gradients of ``target`` with respect to each of ``sources``.

        Like ``tf.GradientTape.gradient``: a non-scalar target is differentiated
        as the real scalar ``Re sum(conj(output_gradients) * target)``, with
        ``output_gradients`` equal to ones when not given (for real arrays this is
        ``sum(output_gradients * target)``).  A source with no recorded path to the
        target gets None.
        """
        if not isinstance(target, Variable):
            raise TypeError(
                f"target must be a Variable recorded by this tape, got {type(target).__name__}"
            )
        if output_gradients is None:
            # The sum over the target is chosen here: the seed is all ones.
            seed = np.ones_like(target.value)
        else:
            seed = as_array(output_gradients, "output_gradients")
            if seed.shape != target.shape:
                raise ValueError(
                    f"output_gradients must have the target's shape {target.shape}, "
                    f"got shape {seed.shape}"
                )
        grads = {id(target): seed}
        for out, inputs, vjp in reversed(self._records):
            g = grads.get(id(out))
            if g is None:
                continue  # this record does not lead to the target
            for x, gx in zip(inputs, vjp(g), strict=True):
                if isinstance(x, Variable):
                    grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx
        if isinstance(sources, Variable):
            return grads.get(id(sources))
        return [grads.get(id(s)) for s in sources]

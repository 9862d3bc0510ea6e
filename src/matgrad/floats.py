"""Float32 results that differ only in rounding.

A matrix product adds its terms in an order that the kernel chooses: the
reference kernels, oneDNN's kernel for this CPU's instruction set, a BLAS
or XLA. Float32 addition is not associative, so two correct kernels can
print different last digits. The pages never assert such digits; they
measure the difference in units in the last place (:func:`ulps`) and, for
a sum of three terms, say which grouping this machine's kernel used
(:func:`three_term_sums`, :func:`grouping_of`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._checks import as_array


def ulps(actual, desired) -> int:
    """The largest difference between two float arrays, in units in the last place.

    The unit is the spacing of ``desired``'s dtype at each entry of
    ``desired`` (``np.spacing``); 0 means the arrays are equal entry by entry.
    """
    a = as_array(actual, "actual", allow_complex=False)
    d = as_array(desired, "desired", allow_complex=False)
    if a.shape != d.shape:
        raise ValueError(
            f"actual and desired must have the same shape, got {a.shape} and {d.shape}"
        )
    if a.size == 0:
        return 0
    unit = np.abs(np.spacing(d))
    return int(np.rint(np.max(np.abs(a.astype(np.float64) - d.astype(np.float64)) / unit)))


def correctly_rounded(x: Fraction, dtype) -> np.floating:
    """The number of ``dtype`` nearest to the exact rational ``x`` (ties to even).

    One rounding, from the exact value: what IEEE arithmetic calls the
    correctly rounded result. (Converting through float64 first would round
    twice.)  For finite ``x`` inside the dtype's range.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize > 8:
        raise TypeError(f"dtype must be float16, float32 or float64, got {dtype}")
    guess = dtype.type(float(x))  # at most one step away
    up, down = np.nextafter(guess, dtype.type(np.inf)), np.nextafter(guess, dtype.type(-np.inf))
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    # nearest first, then the one whose last bit is even
    return min(
        (guess, up, down), key=lambda c: (abs(Fraction(float(c)) - x), int(c.view(bits)) & 1)
    )


def three_term_sums(x0, x1, x2, names=("b0", "b1", "b2")) -> dict[str, np.floating]:
    """Every way a kernel can add three numbers, in their own precision.

    Returns ``{"(b0 + b1) + b2": ..., "(b0 + b2) + b1": ..., "b0 + (b1 + b2)": ...}``
    (with ``names``), and under ``"round(b0 + b1 + b2)"`` the correctly rounded
    sum: the exact sum, in rational arithmetic, rounded once. Each grouping
    is computed in the order its key says, with each addition correctly
    rounded, so all four are the same on any machine.
    """
    terms = [np.asarray(x)[()] for x in (x0, x1, x2)]
    if any(not np.issubdtype(t.dtype, np.floating) for t in terms):
        raise TypeError(
            f"x0, x1, x2 must be floating-point scalars, got {[str(t.dtype) for t in terms]}"
        )
    if len({t.dtype for t in terms}) != 1:
        raise TypeError(f"x0, x1, x2 must share one dtype, got {[str(t.dtype) for t in terms]}")
    if terms[0].dtype.itemsize > 8:
        raise TypeError(f"x0, x1, x2 must be float16, float32 or float64, got {terms[0].dtype}")
    a, b, c = terms
    n0, n1, n2 = names
    exact = Fraction(float(a)) + Fraction(float(b)) + Fraction(float(c))
    return {
        f"({n0} + {n1}) + {n2}": (a + b) + c,
        f"({n0} + {n2}) + {n1}": (a + c) + b,
        f"{n0} + ({n1} + {n2})": a + (b + c),
        "round(b0 + b1 + b2)": correctly_rounded(exact, a.dtype),
    }


def grouping_of(value, sums: dict[str, np.floating]) -> str:
    """The keys of ``sums`` (from :func:`three_term_sums`) whose value is ``value``,
    joined by ``" = "``; ``"∅"`` when no grouping gives it."""
    found = [name for name, s in sums.items() if s == value]
    return " = ".join(found) if found else "∅"

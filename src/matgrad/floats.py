"""Float32 results that differ only in rounding.

A matrix product adds its terms in an order that the kernel chooses:
Eigen's contraction, oneDNN's sgemm, a BLAS or XLA. Float32 addition is not
associative, so two correct kernels can print different last digits. The
pages never assert such digits; they measure the difference in units in the
last place (:func:`ulps`) and, for a sum of three terms, say which groupings
are consistent with what this machine's kernel printed
(:func:`three_term_sums`, :func:`grouping_of`, :func:`groupings_consistent_with`,
:func:`groupings_table`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._checks import as_array

#: The names of :func:`three_term_sums`' keys, in English and in Chinese.
GROUPING_NAMES = {
    "(b0 + b1) + b2": ("left to right", "从左到右"),
    "(b0 + b2) + b1": ("ends first", "先加首尾两项"),
    "b0 + (b1 + b2)": ("right to left", "从右到左"),
    "round(b0 + b1 + b2)": ("correctly rounded", "正确舍入"),
}
_ORDERS = tuple(GROUPING_NAMES)[:3]  # the three groupings; the fourth key is not an order
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


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


def dyadic_text(x: Fraction) -> str:
    """A binary fraction written exactly, as an odd integer times a power of two.

    ``Fraction(-11615089, 2**26)`` gives ``"-11615089/2²⁶"``, ``Fraction(12)``
    gives ``"3·2²"``: a float32 is such a number whose odd integer is below 2²⁴.
    """
    if not isinstance(x, Fraction):
        raise TypeError(f"x must be a Fraction, got {type(x).__name__}")
    den = x.denominator
    if den & (den - 1):
        raise ValueError(f"x must have a power of two as denominator, got {x}")
    if x == 0:
        return "0"
    num, exp = x.numerator, -(den.bit_length() - 1)
    while num % 2 == 0:
        num //= 2
        exp += 1
    if exp == 0:
        return str(num)
    power = "2" + str(abs(exp)).translate(_SUPERSCRIPT)
    return f"{num}/{power}" if exp < 0 else f"{num}·{power}"


def groupings_consistent_with(values, sums, *, rounded: bool = False) -> list[str]:
    """The groupings that give every entry of ``values``.

    ``values`` holds one float per sum, and ``sums`` one dict of
    :func:`three_term_sums` per entry; the result lists the keys of the three
    groupings whose sum equals the entry, for every entry. The correctly
    rounded sum is not an order, so it is left out unless ``rounded`` is true
    (a kernel that adds in float64 and rounds once gives it). An empty list
    means that no single grouping explains them all.
    """
    values = list(np.asarray(values).ravel())
    sums = list(sums)
    if len(values) != len(sums):
        raise ValueError(f"values has {len(values)} entries and sums {len(sums)}: they must match")
    keys = tuple(GROUPING_NAMES) if rounded else _ORDERS
    return [k for k in keys if all(s[k] == v for v, s in zip(values, sums, strict=True))]


def groupings_table(rows) -> list[dict[str, np.floating]]:
    """Display every grouping of each row's three terms, in both editions; return the sums.

    ``rows`` is an (n, 3) float array (the puzzle's ``B``). The table has one
    line per row: its exact sum as a binary fraction (:func:`dyadic_text`),
    then each grouping's float32 sum and the correctly rounded sum, printed
    as NumPy prints them (the shortest decimal that reads back as the same
    number). Returns ``[three_term_sums(*row) for row in rows]``.
    """
    from .tables import markdown_table

    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.shape[1] != 3 or not np.issubdtype(rows.dtype, np.floating):
        raise ValueError(
            f"rows must be an (n, 3) float array, got shape {rows.shape} and dtype {rows.dtype}"
        )
    sums = [three_term_sums(*row) for row in rows]
    exact = [sum((Fraction(float(v)) for v in row), Fraction(0)) for row in rows]
    markdown_table(
        ["row of B", "exact sum", *(GROUPING_NAMES[k][0] for k in GROUPING_NAMES)],
        [
            [r, dyadic_text(e), *map(str, s.values())]
            for r, (e, s) in enumerate(zip(exact, sums, strict=True))
        ],
        zh_header=["B 的行", "精确和", *(GROUPING_NAMES[k][1] for k in GROUPING_NAMES)],
        align="rrrrrr",
    )
    return sums


def sum_gap_bound(terms, dtype=np.float32) -> np.ndarray:
    """How far apart two correct kernels' sums of each row of ``terms`` can be.

    Any order of adding n numbers in ``dtype`` (unit roundoff u, 2**-24 for
    float32) passes each term through at most n - 1 roundings, so its result
    lies within gamma_{n-1} * sum|b_k| of the exact sum, with
    gamma_m = m u / (1 - m u); two kernels' results lie within twice that.
    The bound is absolute: for a sum that cancels it is large relative to the
    sum. For the rows of a product seeded with ones (the puzzle's gradient),
    the multiplications by 1 are exact and add nothing. ``terms`` is an
    (..., n) array; the result has its shape without the last axis.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize > 8:
        raise TypeError(f"dtype must be float16, float32 or float64, got {dtype}")
    b = as_array(terms, "terms", allow_complex=False)
    if b.ndim == 0 or b.shape[-1] == 0:
        raise ValueError(f"terms must have at least one term along its last axis, got {b.shape}")
    u = float(np.finfo(dtype).eps) / 2
    m = b.shape[-1] - 1
    gamma = m * u / (1 - m * u)
    return 2 * gamma * np.abs(b.astype(np.float64)).sum(axis=-1)

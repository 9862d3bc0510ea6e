"""The matrices of the source questions, one source of truth for the book.

``SEED_T`` and ``SEED_B`` are the 5x3 and 3x3 matrices of the puzzle
(``shared/seeds/000``): ``tape.gradient(SEED_T @ SEED_B, SEED_T)`` printed five
rows equal to ``EXPECTED_SEED_GRAD_ROW``.  ``SMALL_A`` and ``SMALL_B`` are the 2x2 and
2x3 matrices of the registered-gradient example (``shared/seeds/002``).

The ``EXPECTED_*`` values are what the askers *printed*; they are
expectations that the book and the tests check against freshly computed
results, never results themselves.

These values come from Stack Overflow questions 64856893 and 52622343 and stay
under CC BY-SA 4.0, not under the MIT licence of the code (LICENSE, LICENSE-TEXT).
"""

import numpy as np

SEED_T = np.array(
    [
        [0.8363, 0.4719, 0.9783],
        [0.3379, 0.6548, 0.3835],
        [0.7846, 0.9173, 0.2393],
        [0.5418, 0.3875, 0.4276],
        [0.0948, 0.2637, 0.8039],
    ],
    dtype=np.float32,
)

SEED_B = np.array(
    [
        [0.43842274, -0.53439844, -0.07710262],
        [1.5658046, -0.1012345, -0.2744976],
        [1.4204658, 1.2609464, -0.43640924],
    ],
    dtype=np.float32,
)

SMALL_A = np.array([[1, 2], [3, 4]], dtype=np.float32)
SMALL_B = np.array([[6, 7, 8], [9, 10, 11]], dtype=np.float32)

#: Each of the five rows that ``tape.gradient(Y, T)`` printed in seed 000.
EXPECTED_SEED_GRAD_ROW = np.array([-0.17307831, 1.1900724, 2.245003], dtype=np.float32)
#: Row 0 of ``tape.gradient(Y[0, 0], T)`` in seed 000 (the other rows were zero).
EXPECTED_Y00_GRAD_ROW = np.array([0.43842274, 1.5658046, 1.4204658], dtype=np.float32)
#: The sum the asker of seed 000 expected to see.
EXPECTED_Y00_SUM = np.float32(3.424693)
#: Seed 002: gradient of sum(a @ b) with respect to a.
EXPECTED_SMALL_GRAD_ONES = np.array([[21, 30], [21, 30]], dtype=np.float32)
#: Seed 002: gradient with respect to a when the upstream gradient is c = a @ b.
EXPECTED_SMALL_GRAD_C = np.array([[573, 816], [1295, 1844]], dtype=np.float32)

# Read-only, so that no chapter can change the data another chapter uses.
for _value in list(globals().values()):
    if isinstance(_value, np.ndarray):
        _value.setflags(write=False)
del _value


def random_normal(rng, shape, dtype):
    """An array of standard normal entries drawn from ``rng``, real or complex.

    ``rng`` is a ``numpy.random.Generator``; ``shape`` an int or a tuple of
    ints; ``dtype`` a real or complex floating dtype.  A real dtype draws one
    normal array; a complex dtype draws the real part and then the imaginary
    part, so the real part equals what the real dtype would have drawn.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if not isinstance(dims, tuple) or not all(isinstance(d, (int, np.integer)) for d in dims):
        raise TypeError(f"shape must be an int or a tuple of ints, not {shape!r}")
    if any(d < 0 for d in dims):
        raise ValueError(f"shape must not have negative sizes, got {shape!r}")
    try:
        kind = np.dtype(dtype).kind
    except TypeError as err:
        raise TypeError(f"dtype must be a NumPy dtype, not {dtype!r}") from err
    if kind not in "fc":
        raise ValueError(f"dtype must be a real or complex floating dtype, got {np.dtype(dtype)}")
    x = rng.standard_normal(dims)
    if kind == "c":
        x = x + 1j * rng.standard_normal(dims)
    return x.astype(dtype)

"""Input checks shared by the helpers: one place for the error messages."""

from __future__ import annotations

import numpy as np


def as_array(x, name: str, *, allow_complex: bool = True) -> np.ndarray:
    """Return ``x`` as a NumPy array of a floating (or complex) dtype.

    Raises TypeError, naming ``name``, for integer, boolean, object or string
    data: a derivative needs real (or complex) numbers, and silently casting an
    integer matrix would hide a bug in the caller.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic array-likes
        raise TypeError(f"{name} must be array-like, got {type(x).__name__}") from exc
    kind = arr.dtype.kind
    if kind == "f" or (allow_complex and kind == "c"):
        return arr
    wanted = "a floating or complex" if allow_complex else "a floating"
    raise TypeError(
        f"{name} must have {wanted} dtype, got {arr.dtype} with shape {arr.shape}; "
        f"convert it first, e.g. np.asarray({name}, dtype=np.float64)"
    )


def check_ndim(arr: np.ndarray, name: str, ndim: int | tuple[int, ...]) -> None:
    """Raise ValueError unless ``arr.ndim`` is ``ndim`` (or one of them)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if arr.ndim not in allowed:
        want = " or ".join(str(n) for n in allowed)
        raise ValueError(
            f"{name} must have rank {want}, got rank {arr.ndim} with shape {arr.shape}"
        )


def check_callable(f, name: str) -> None:
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")


def as_shape(shape, name: str) -> tuple[int, ...]:
    """Validate a shape: a tuple of positive ints (an int is one axis)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{name} must be a tuple of ints, got {shape!r}")
    shape = tuple(shape)
    if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"{name} must be a tuple of ints, got {shape!r}")
    if any(s <= 0 for s in shape):
        raise ValueError(f"{name} must contain positive ints, got {shape!r}")
    return tuple(int(s) for s in shape)


def check_square(arr: np.ndarray, name: str) -> None:
    """Raise ValueError unless ``arr`` is a (batch of) square matrices: rank >= 2,
    the last two axes equal."""
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(
            f"{name} must be a square matrix or a batch of them (shape (..., n, n)), "
            f"got shape {arr.shape}"
        )


def check_same_dtype(**arrays: np.ndarray) -> None:
    """Raise TypeError unless every array has one dtype; the message lists them by name."""
    if len({a.dtype for a in arrays.values()}) > 1:
        listed = ", ".join(f"{n}: {a.dtype}" for n, a in arrays.items())
        raise TypeError(f"the arrays must share one dtype, got {listed}")


def check_shape(arr: np.ndarray, name: str, shape: tuple, why: str) -> None:
    """Raise ValueError unless ``arr.shape == shape``; ``why`` says where that shape comes from."""
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} ({why}), got shape {arr.shape}")

"""The example matrices are the source questions' numbers, unchanged."""

import re
from pathlib import Path

import numpy as np
import pytest

from matgrad import examples

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def test_shapes_and_dtypes():
    assert examples.SEED_T.shape == (5, 3)
    assert examples.SEED_B.shape == (3, 3)
    assert examples.SMALL_A.shape == (2, 2)
    assert examples.SMALL_B.shape == (2, 3)
    for name in ("SEED_T", "SEED_B", "SMALL_A", "SMALL_B"):
        assert getattr(examples, name).dtype == np.float32, name


def test_read_only():
    with pytest.raises(ValueError):
        examples.SEED_T[0, 0] = 1.0


def test_literal_values():
    # As typed in the source question (seed 000): first and last entries.
    assert examples.SEED_T[0, 0] == np.float32(0.8363)
    assert examples.SEED_T[4, 2] == np.float32(0.8039)
    assert examples.SEED_B[0, 1] == np.float32(-0.53439844)
    assert examples.SEED_B[2, 2] == np.float32(-0.43640924)
    np.testing.assert_array_equal(examples.SMALL_A, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(examples.SMALL_B, [[6, 7, 8], [9, 10, 11]])


def test_expected_row_is_row_sums_of_b():
    # The printed gradient row is B's row sums (left-to-right float32 order).
    b = examples.SEED_B
    sums = (b[:, 0] + b[:, 1]) + b[:, 2]
    np.testing.assert_array_equal(sums, examples.EXPECTED_SEED_GRAD_ROW)
    np.testing.assert_array_equal(b[:, 0], examples.EXPECTED_Y00_GRAD_ROW)


def test_small_expectations_follow_from_the_matrices():
    a, b = examples.SMALL_A, examples.SMALL_B
    c = a @ b
    np.testing.assert_array_equal(np.ones_like(c) @ b.T, examples.EXPECTED_SMALL_GRAD_ONES)
    np.testing.assert_array_equal(c @ b.T, examples.EXPECTED_SMALL_GRAD_C)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", text)]


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared/seeds is not beside this checkout")
def test_matrices_match_the_seed_text():
    text = (SEEDS / "000_10fdd87baee07bf0.txt").read_text()
    mat = text[text.index("mat = [") : text.index("another_mat")]
    other = text[text.index("another_mat = [") : text.index("tf_t =")]
    np.testing.assert_array_equal(np.float32(_numbers(mat)), examples.SEED_T.ravel())
    np.testing.assert_array_equal(np.float32(_numbers(other)), examples.SEED_B.ravel())
    printed = text[text.index("tf.Tensor(") : text.index("shape=(5, 3)")]
    np.testing.assert_array_equal(
        np.float32(_numbers(printed)), np.tile(examples.EXPECTED_SEED_GRAD_ROW, 5)
    )
    assert "3.424693" in text


def test_hide_retracing_warning_drops_only_that_message():
    import logging

    from matgrad.tf_env import hide_retracing_warning

    hide_retracing_warning()
    hide_retracing_warning()
    logger = logging.getLogger("tensorflow")
    assert sum(type(f).__name__ == "_DropRetracingWarning" for f in logger.filters) == 1
    make = lambda msg: logging.LogRecord("tensorflow", logging.WARNING, "", 0, msg, None, None)
    assert not logger.filter(make("5 out of the last 5 calls triggered tf.function retracing."))
    assert logger.filter(make("some other warning"))


def test_seed_gradient_in_subprocess_with_and_without_onednn():
    """What holds on every machine: each run adds every row of B in one of its
    groupings (which one is the kernel's choice), and the runs agree within
    float32 rounding. Nothing here depends on this CPU's instruction set."""
    from matgrad.floats import three_term_sums
    from matgrad.tf_env import seed_gradient_in_subprocess

    sums = [three_term_sums(*row) for row in examples.SEED_B]
    off = seed_gradient_in_subprocess(onednn=False)
    on = seed_gradient_in_subprocess(onednn=True)
    from matgrad.floats import sum_gap_bound

    for gradient in (off, on):
        gap = np.abs(gradient - examples.EXPECTED_SEED_GRAD_ROW)
        assert np.all(gap <= sum_gap_bound(examples.SEED_B)), gap
        for value, row_sums in zip(gradient[0], sums, strict=True):
            assert value in row_sums.values(), (value, row_sums)
    with pytest.raises(TypeError, match="onednn must be True or False"):
        seed_gradient_in_subprocess(onednn="yes")


def test_random_normal_real_and_complex():
    real = examples.random_normal(np.random.default_rng(3), (2, 3), np.float32)
    assert real.shape == (2, 3) and real.dtype == np.float32
    z = examples.random_normal(np.random.default_rng(3), (2, 3), np.complex128)
    assert z.dtype == np.complex128
    # The real part is what the real dtype draws; the imaginary part follows.
    np.testing.assert_array_equal(z.real.astype(np.float32), real)
    rng = np.random.default_rng(3)
    rng.standard_normal((2, 3))
    np.testing.assert_array_equal(z.imag, rng.standard_normal((2, 3)))
    assert examples.random_normal(np.random.default_rng(0), 4, np.float64).shape == (4,)


def test_random_normal_advances_the_generator():
    rng = np.random.default_rng(0)
    a = examples.random_normal(rng, 3, np.float64)
    b = examples.random_normal(rng, 3, np.float64)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize(
    "args, error, word",
    [
        ((0, (2,), np.float64), TypeError, "rng"),
        ((None, (2,), np.float64), TypeError, "rng"),
        ((np.random.default_rng(0), [2, 2], np.float64), TypeError, "shape"),
        ((np.random.default_rng(0), (2, 2.0), np.float64), TypeError, "shape"),
        ((np.random.default_rng(0), (2, -1), np.float64), ValueError, "shape"),
        ((np.random.default_rng(0), (2,), np.int64), ValueError, "dtype"),
        ((np.random.default_rng(0), (2,), "not a dtype"), TypeError, "dtype"),
    ],
)
def test_random_normal_rejects_bad_arguments(args, error, word):
    with pytest.raises(error, match=word):
        examples.random_normal(*args)

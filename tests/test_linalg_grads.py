"""matgrad.linalg_grads and matgrad.checking against TensorFlow's tape and JAX.

Each rule is drawn by hypothesis over the dtypes TensorFlow registers the
op for (float32/64, complex64/128) and over batch shapes, and compared with
``tape.gradient`` and a random ``output_gradients``. Where TensorFlow's
registered rule is wrong for complex arrays (the determinant, the imaginary
part of the log-determinant's upstream gradient), the test says so and
compares with central differences instead. JAX's pullback applies the plain
transpose, so ``ours == conj(pullback(conj(G)))`` (see test_jax.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.checking import RuleCheck, check_rule, check_table, show_checks
from matgrad.linalg_grads import (
    adjugate,
    bias_add_grad,
    cholesky_grad,
    det_grad,
    det_grad_as_registered,
    einsum_grad,
    inverse_grad,
    logdet_grad,
)
from test_tf_matmul import _random, _tol

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def cases(draw, dtypes=DTYPES, max_n=4):
    """(rng, dtype, batch shape, n): a random generator and the sizes of one case."""
    dtype = draw(st.sampled_from(dtypes))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(1, max_n))
    return np.random.default_rng(draw(st.integers(0, 2**16))), dtype, batch, n


def _well_conditioned(rng, shape, dtype):
    return (_random(rng, shape, dtype) + 2 * shape[-1] * np.eye(shape[-1])).astype(dtype)


def _hpd(rng, shape, dtype):
    x = _random(rng, shape, dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _tape(fn, inputs, g):
    ts = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        tape.watch(ts)
        y = fn(*ts)
    return [t.numpy() for t in tape.gradient(y, ts, output_gradients=tf.constant(g))]


def _close(ours, theirs, dtype, scale=1.0):
    tol = _tol(dtype)
    for x, y in zip(ours, theirs, strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=tol["rtol"], atol=tol["atol"] * scale)


# --- every rule against the tape ---------------------------------------------------


@SETTINGS
@given(cases())
def test_bias_add_grad_matches_tape(case):
    rng, dtype, batch, n = case
    x, b = _random(rng, (2,) + batch + (n,), dtype), _random(rng, (n,), dtype)
    g = _random(rng, x.shape, dtype)
    _close([g, bias_add_grad(g)], _tape(tf.nn.bias_add, [x, b], g), dtype, scale=10)


@SETTINGS
@given(cases())
def test_bias_add_grad_nchw_matches_tape(case):
    rng, dtype, batch, n = case
    x, b = _random(rng, (2, n) + batch, dtype), _random(rng, (n,), dtype)
    g = _random(rng, x.shape, dtype)
    fn = lambda x, b: tf.nn.bias_add(x, b, data_format="NC...")
    _close([g, bias_add_grad(g, data_format="NCHW")], _tape(fn, [x, b], g), dtype, scale=10)


@SETTINGS
@given(cases())
def test_inverse_grad_matches_tape(case):
    rng, dtype, batch, n = case
    a = _well_conditioned(rng, batch + (n, n), dtype)
    g = _random(rng, a.shape, dtype)
    _close([inverse_grad(a, g)], _tape(tf.linalg.inv, [a], g), dtype)


@SETTINGS
@given(cases())
def test_det_grad_as_registered_matches_tape(case):
    rng, dtype, batch, n = case
    a = _well_conditioned(rng, batch + (n, n), dtype) / n
    g = _random(rng, batch, dtype)
    _close([det_grad_as_registered(a, g)], _tape(tf.linalg.det, [a], g), dtype, scale=10)


@SETTINGS
@given(cases(dtypes=[np.float32, np.float64]))
def test_det_grad_matches_tape_for_real_arrays(case):
    rng, dtype, batch, n = case
    a = _well_conditioned(rng, batch + (n, n), dtype) / n
    g = _random(rng, batch, dtype)
    _close([det_grad(a, g)], _tape(tf.linalg.det, [a], g), dtype, scale=10)


@SETTINGS
@given(cases())
def test_logdet_grad_matches_tape_for_a_real_upstream_gradient(case):
    rng, dtype, batch, n = case
    a = _well_conditioned(rng, batch + (n, n), dtype)
    g = _random(rng, batch, np.float64).astype(dtype)  # real values in a's dtype
    logabsdet = lambda x: tf.linalg.slogdet(x)[1]
    _close([logdet_grad(a, g)], _tape(logabsdet, [a], g), dtype)


@SETTINGS
@given(cases())
def test_cholesky_grad_matches_tape(case):
    rng, dtype, batch, n = case
    a = _hpd(rng, batch + (n, n), dtype)
    l = np.linalg.cholesky(a)
    g = _random(rng, a.shape, dtype)
    _close([cholesky_grad(l, g)], _tape(tf.linalg.cholesky, [a], g), dtype, scale=10)


PATTERNS = {
    "ij,jk->ik": "ij jk",
    "bij,bjk->bik": "bij bjk",
    "ii->": "ii",
    "ii->i": "ii",
    "ij->j": "ij",
    "ij->ji": "ij",
    "ijk,ik->j": "ijk ik",
    "ij,jk,kl->il": "ij jk kl",
    "i,i->": "i i",
    "ij,kl->ijkl": "ij kl",
    "ij,jk": "ij jk",
}


@SETTINGS
@given(cases(), st.sampled_from(sorted(PATTERNS)))
def test_einsum_grad_matches_tape(case, subscripts):
    rng, dtype, _, n = case
    sizes = {c: (n if c in "ij" else 1 + (ord(c) + n) % 3) for c in "bijkl"}
    operands = [
        _random(rng, tuple(sizes[c] for c in term), dtype) for term in PATTERNS[subscripts].split()
    ]
    out = np.einsum(subscripts, *operands)
    g = _random(rng, out.shape, dtype)
    fn = lambda *xs: tf.einsum(subscripts, *xs)
    _close(einsum_grad(subscripts, operands, g), _tape(fn, operands, g), dtype, scale=10)


# --- where TensorFlow is wrong: central differences decide ----------------------------


@settings(max_examples=10, deadline=None)
@given(cases(dtypes=[np.complex128], max_n=3))
def test_complex_det_grad_is_right_and_tensorflows_is_not(case):
    rng, dtype, _, n = case
    a = _random(rng, (n, n), dtype)
    result = check_rule(tf.linalg.det, det_grad, [a])
    assert result.compute_gradient < 1e-5 and result.finite_diff < 1e-7, result
    registered = check_rule(tf.linalg.det, det_grad_as_registered, [a])
    assert registered.tape < 1e-10, registered
    # they differ by G (det A - conj(det A)) A^-H, zero only for real det A
    if abs(np.linalg.det(a).imag) > 1e-3:
        assert not result.passed[0] and not registered.passed[2]


def test_det_grad_at_a_singular_matrix_is_the_adjugate():
    from matgrad.jacobian import numeric_jacobian

    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(det_grad(s, np.float64(1.0)), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(
        det_grad(s, np.float64(1.0)), numeric_jacobian(np.linalg.det, s), atol=1e-8
    )
    with pytest.raises(np.linalg.LinAlgError):
        det_grad_as_registered(s, np.float64(1.0))
    t = tf.constant(s)
    with tf.GradientTape() as tape:
        tape.watch(t)
        d = tf.linalg.det(t)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        tape.gradient(d, t)


def test_adjugate_is_det_times_inverse():
    rng = np.random.default_rng(1)
    for dtype in DTYPES:
        a = _well_conditioned(rng, (2, 3, 3), dtype)
        want = np.linalg.det(a)[..., None, None] * np.linalg.inv(a)
        np.testing.assert_allclose(adjugate(a), want, **_tol(dtype))


def test_logdet_grad_drops_the_imaginary_part_tensorflow_keeps():
    rng = np.random.default_rng(2)
    a = _well_conditioned(rng, (3, 3), np.complex128)
    result = check_rule(lambda x: tf.linalg.slogdet(x)[1], logdet_grad, [a])
    assert result.passed == (False, True, True), result


def test_cholesky_gradient_is_that_of_the_symmetrised_input():
    rng = np.random.default_rng(3)
    a = _hpd(rng, (3, 3), np.float64)
    rule = lambda x, g: cholesky_grad(np.linalg.cholesky(x), g)
    sym = lambda x: tf.linalg.cholesky((x + tf.linalg.adjoint(x)) / 2)
    assert check_rule(sym, rule, [a]).ok
    assert check_rule(tf.linalg.cholesky, rule, [a]).passed == (True, False, False)


# --- JAX: the complex convention mapped ---------------------------------------------


@settings(max_examples=15, deadline=None)
@given(cases(dtypes=[np.float64, np.complex128], max_n=3))
def test_rules_match_jax_pullbacks(case):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng, dtype, batch, n = case
    a = _well_conditioned(rng, batch + (n, n), dtype)
    h = _hpd(rng, batch + (n, n), dtype)
    b = _random(rng, (n, 2), dtype)
    g_mat, g_det = _random(rng, a.shape, dtype), _random(rng, batch, dtype)
    g_real = _random(rng, batch, np.float64)

    def ours_from_jax(f, x, g):
        _, pullback = jax.vjp(f, jnp.asarray(x))
        return np.conj(np.asarray(pullback(np.conj(g))[0]))

    tol = _tol(dtype)
    np.testing.assert_allclose(
        inverse_grad(a, g_mat), ours_from_jax(jnp.linalg.inv, a, g_mat), **tol
    )
    np.testing.assert_allclose(
        det_grad(a, g_det),
        ours_from_jax(jnp.linalg.det, a, g_det),
        rtol=1e-9,
        atol=1e-9 * np.abs(det_grad(a, g_det)).max(),
    )
    logabsdet = lambda x: jnp.linalg.slogdet(x)[1]
    np.testing.assert_allclose(
        logdet_grad(a, g_real.astype(dtype)), ours_from_jax(logabsdet, a, g_real), **tol
    )
    np.testing.assert_allclose(
        cholesky_grad(np.linalg.cholesky(h), g_mat),
        ours_from_jax(jnp.linalg.cholesky, h, g_mat),
        rtol=1e-9,
        atol=1e-9,
    )
    g_ein = _random(rng, batch + (n, 2), dtype)
    ours = einsum_grad("...ij,jk->...ik".replace("...", "xy"[: len(batch)]), (a, b), g_ein)
    _, pullback = jax.vjp(lambda x, y: jnp.einsum("...ij,jk->...ik", x, y), a, b)
    for o, t in zip(ours, pullback(np.conj(g_ein)), strict=True):
        np.testing.assert_allclose(o, np.conj(np.asarray(t)), **tol)


# --- bad input: every helper, and the checker -----------------------------------------

SQUARE = np.eye(3)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: bias_add_grad(np.ones(3)), ValueError, r"grad must have rank 2.*\(3,\)"),
        (lambda: bias_add_grad(np.ones((2, 3), dtype=int)), TypeError, "grad.*int"),
        (lambda: bias_add_grad(np.ones((2, 3)), data_format="NWC"), ValueError, "data_format"),
        (
            lambda: inverse_grad(np.ones((2, 3)), np.ones((2, 3))),
            ValueError,
            r"a must be a square.*\(2, 3\)",
        ),
        (lambda: inverse_grad(np.eye(3, dtype=int), SQUARE), TypeError, "a must have.*int"),
        (
            lambda: inverse_grad(SQUARE, np.ones((2, 2))),
            ValueError,
            r"grad must have.*\(3, 3\).*\(2, 2\)",
        ),
        (lambda: inverse_grad(SQUARE, SQUARE.astype(np.float32)), TypeError, "float64.*float32"),
        (lambda: det_grad(np.ones(3), 1.0), ValueError, r"a must be a square.*\(3,\)"),
        (lambda: det_grad(SQUARE, np.ones(2)), ValueError, r"grad must have.*\(\).*\(2,\)"),
        (lambda: det_grad(SQUARE, np.int64(1)), TypeError, "grad.*int64"),
        (lambda: det_grad_as_registered(np.ones((3, 2)), 1.0), ValueError, "square"),
        (lambda: logdet_grad(np.ones((2, 3, 2)), np.ones(2)), ValueError, "square"),
        (
            lambda: logdet_grad(np.ones((2, 3, 3)), np.ones(3)),
            ValueError,
            r"grad must have.*\(2,\)",
        ),
        (lambda: cholesky_grad(np.ones((3, 2)), np.ones((3, 2))), ValueError, "l must be a square"),
        (lambda: cholesky_grad(np.eye(2, dtype=bool), np.eye(2)), TypeError, "l must have.*bool"),
        (lambda: adjugate(np.ones((2, 3))), ValueError, "square"),
        (lambda: einsum_grad("ij,jk->ik", [SQUARE], SQUARE), ValueError, "2 operand.*1 were given"),
        (
            lambda: einsum_grad("ij,jk->ik", [SQUARE, np.ones((2, 2))], SQUARE),
            ValueError,
            r"letter 'j' has size 3 and 2",
        ),
        (lambda: einsum_grad("ijk->i", [SQUARE], np.ones(3)), ValueError, r"'ijk' has 3.*\(3, 3\)"),
        (lambda: einsum_grad("ij->ik", [SQUARE], SQUARE), ValueError, r"\['k'\] appear in no"),
        (lambda: einsum_grad("...ij->ij", [SQUARE], SQUARE), ValueError, "ellipsis"),
        (lambda: einsum_grad("i1->i", [SQUARE], np.ones(3)), ValueError, "only letters"),
        (lambda: einsum_grad("ij->ii", [SQUARE], SQUARE), ValueError, "repeats"),
        (lambda: einsum_grad("ij->i", [SQUARE], np.ones(2)), ValueError, r"grad must have.*\(3,\)"),
        (lambda: einsum_grad("ij->i", SQUARE, np.ones(3)), TypeError, "operands must be a list"),
        (
            lambda: einsum_grad(b"ij->i", [SQUARE], np.ones(3)),
            TypeError,
            "subscripts must be a string",
        ),
        (
            lambda: einsum_grad("ij->i", [np.eye(3, dtype=int)], np.ones(3)),
            TypeError,
            r"operands\[0\].*int",
        ),
        (
            lambda: einsum_grad("ij->i", [SQUARE], np.ones(3, np.complex128)),
            TypeError,
            "complex128",
        ),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(tf_fn="inv"), TypeError, "tf_fn must be callable"),
        (dict(rule=None), TypeError, "rule must be callable"),
        (dict(inputs=SQUARE), TypeError, "inputs must be a non-empty list"),
        (dict(inputs=[]), TypeError, "inputs must be a non-empty list"),
        (dict(inputs=[np.eye(3, dtype=int)]), TypeError, r"inputs\[0\].*int"),
        (dict(inputs=[SQUARE, SQUARE.astype(np.float32)]), TypeError, "float64.*float32"),
        (dict(tolerances=(1e-3, 1e-3)), ValueError, "three non-negative"),
        (dict(rule=lambda a, g: np.ones((2, 2))), ValueError, r"gradient 0 has shape \(2, 2\)"),
        (dict(rule=lambda a, g: (g, g)), ValueError, "2 gradient.*1 input"),
    ],
)
def test_check_rule_bad_input(kwargs, error, match):
    args = dict(tf_fn=tf.linalg.inv, rule=inverse_grad, inputs=[SQUARE + 1e-3])
    args.update(kwargs)
    with pytest.raises(error, match=match):
        check_rule(args.pop("tf_fn"), args.pop("rule"), args.pop("inputs"), **args)


def test_check_table_renders_rows_and_refuses_other_objects():
    row = RuleCheck("inverse", "float64", "(3, 3)", 1e-16, 2.0, 0.0, (1e-10, 1e-5, 1e-7))
    assert not row.ok and row.passed == (True, False, True)
    table = check_table([row])
    assert table.splitlines()[2] == "| inverse | float64 | (3, 3) | 1.0e-16 | 2.0e+00 ✗ | 0.0e+00 |"
    assert row._repr_markdown_() == table
    with pytest.raises(TypeError, match="RuleCheck"):
        check_table([("inverse", 1.0)])


def test_show_checks_gives_the_chinese_twin_chinese_titles_and_words(shown):
    row = RuleCheck("inverse", "float64", "(3, 3)", 1e-16, 2.0, 0.0, (1e-10, 1e-5, 1e-7))
    show_checks([row], zh_words={"inverse": "求逆"})
    ((data, metadata),) = shown
    assert data["text/markdown"] == check_table([row])
    chinese = metadata["matgrad"]["zh_CN"]["text/markdown"].splitlines()
    assert chinese[0] == "| 规则 | 数据类型 | 形状 | 梯度带 | compute_gradient | 中心差分 |"
    assert chinese[2] == "| 求逆 | float64 | (3, 3) | 1.0e-16 | 2.0e+00 ✗ | 0.0e+00 |"
    with pytest.raises(TypeError, match="RuleCheck"):
        show_checks([("inverse", 1.0)])
    with pytest.raises(TypeError, match="zh_words"):
        show_checks([row], zh_words=["求逆"])

"""matgrad.floats: rounding differences measured, not assumed; and the oneDNN child."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matgrad import examples
from matgrad.floats import correctly_rounded, grouping_of, three_term_sums, ulps

finite32 = st.floats(-1e3, 1e3, width=32, allow_subnormal=False)


def test_ulps_counts_units_in_the_last_place():
    x = np.float32(1.1900725)
    assert ulps(x, x) == 0
    assert ulps(np.nextafter(x, np.float32(2)), x) == 1
    assert ulps(np.float32([1, 2]), np.float32([1, 2])) == 0
    assert ulps(np.float64(1.0) + 2 * np.spacing(1.0), np.float64(1.0)) == 2


@given(finite32, finite32, finite32)
def test_three_term_sums_follow_their_names(a, b, c):
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    sums = three_term_sums(a, b, c)
    assert sums["(b0 + b1) + b2"] == (a + b) + c
    assert sums["(b0 + b2) + b1"] == (a + c) + b
    assert sums["b0 + (b1 + b2)"] == a + (b + c)
    assert all(v.dtype == np.float32 for v in sums.values())
    # every grouping is within one rounding step per addition of the exact sum
    exact = sums["round(b0 + b1 + b2)"]
    for value in sums.values():
        assert grouping_of(value, sums) != "∅"
        np.testing.assert_allclose(value, exact, rtol=1e-5, atol=1e-3)


@given(finite32, finite32, finite32)
def test_one_rounding_from_float64_when_its_sum_is_exact(a, b, c):
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    exact = Fraction(float(a)) + Fraction(float(b)) + Fraction(float(c))
    wide = np.float64(a) + np.float64(b) + np.float64(c)
    if Fraction(float(wide)) == exact:  # float64 held the sum exactly
        assert three_term_sums(a, b, c)["round(b0 + b1 + b2)"] == np.float32(wide)


def test_correct_rounding_is_one_rounding_ties_to_even():
    one = np.float32(1.0)
    above_half = Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**60)
    assert correctly_rounded(above_half, np.float32) == np.nextafter(one, np.float32(2))
    assert np.float32(float(above_half)) == one  # twice rounded: wrong
    assert correctly_rounded(Fraction(1) + Fraction(1, 2**24), np.float32) == one  # tie
    assert correctly_rounded(Fraction(-3, 10), np.float64) == -0.3
    with pytest.raises(TypeError, match="float16, float32 or float64, got int32"):
        correctly_rounded(Fraction(1), np.int32)


def test_the_seed_rows_groupings():
    """The puzzle's first row: two groupings give one value, the third another."""
    sums = three_term_sums(*examples.SEED_B[0])
    assert len(set(sums.values())) == 2
    assert "(b0 + b1) + b2" in grouping_of(examples.EXPECTED_SEED_GRAD_ROW[0], sums)
    assert grouping_of(np.float32(7.0), sums) == "∅"


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match=r"same shape, got \(2,\) and \(3,\)"):
        ulps(np.zeros(2), np.zeros(3))
    with pytest.raises(TypeError, match="actual must have a floating dtype, got int64"):
        ulps(np.arange(2), np.zeros(2))
    with pytest.raises(TypeError, match="floating-point scalars"):
        three_term_sums(1, 2, 3)
    with pytest.raises(TypeError, match="share one dtype"):
        three_term_sums(np.float32(1), np.float64(2), np.float32(3))


@pytest.mark.tf
def test_onednn_child_reports_its_instruction_set():
    from matgrad.floats import sum_gap_bound
    from matgrad.tf_env import onednn_seed_gradient

    run = onednn_seed_gradient("SSE41")
    assert run.isa != "unknown" and "SSE4.1" in run.isa, run.isa
    gap = np.abs(run.gradient - examples.EXPECTED_SEED_GRAD_ROW)
    assert np.all(gap <= sum_gap_bound(examples.SEED_B)), gap
    with pytest.raises(ValueError, match="max_cpu_isa must be an ONEDNN_MAX_CPU_ISA value"):
        onednn_seed_gradient("avx2")


@pytest.mark.tf
def test_a_child_imports_tensorflow_without_keras_and_jax():
    # The children skip the two packages that `import tensorflow` loads only
    # because they are installed (matgrad/tf_env.py): TensorFlow imports, its
    # ops run, and neither package is loaded.
    import os

    from matgrad import tf_env

    script = tf_env._WITHOUT_KERAS_AND_JAX + (
        "import json, tensorflow as tf\n"
        "y = tf.linalg.trace(tf.eye(3))\n"
        "print(json.dumps([float(y), sys.modules['keras'], sys.modules['jax']]))\n"
    )
    lines = tf_env._run_child(dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), 120, script)
    assert lines[-1] == "[3.0, null, null]", lines


@pytest.mark.tf
def test_onednn_default_follows_tensorflows_policy():
    # port.cc's DefaultOneDnnPolicy on Linux x86: on for CPUs with
    # neural-network instructions (the flags below, as /proc/cpuinfo names them).
    import platform
    from pathlib import Path

    from matgrad.tf_env import onednn_by_default, onednn_in_build

    if not onednn_in_build():
        pytest.skip("this TensorFlow was built without oneDNN")
    default = onednn_by_default()
    assert isinstance(default, bool)
    # the child asks TensorFlow's own switch: the variable, when set, decides,
    # and a change after the first answer changes nothing
    from matgrad.tf_env import onednn_decision

    assert onednn_decision("0") == (False, False)
    assert onednn_decision("1") == (True, True)
    assert onednn_decision("0", then="1") == (False, False)
    assert onednn_decision("1", then="0") == (True, True)
    # the same after a real `import tensorflow`, which makes the first call
    assert onednn_decision("1", then="0", import_tensorflow=True) == (True, True)
    with pytest.raises(TypeError, match="import_tensorflow must be"):
        onednn_decision("1", import_tensorflow="yes")
    with pytest.raises(TypeError, match="start must be a string"):
        onednn_decision(1)
    with pytest.raises(TypeError, match="then must be a string"):
        onednn_decision("0", then=True)
    cpuinfo = Path("/proc/cpuinfo")
    if platform.system() == "Linux" and platform.machine() == "x86_64" and cpuinfo.exists():
        flags = set(cpuinfo.read_text().split())
        nn = {"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"}
        assert default == bool(flags & nn), sorted(flags & nn)


def test_onednn_decision_rejects_what_the_child_did_not_do(monkeypatch):
    # The second answer counts only if the variable had changed by then.
    from matgrad import tf_env

    for printed in ([], ["x"], ['["True", false, "1"]']):
        monkeypatch.setattr(tf_env, "_run_child", lambda *a, out=printed, **k: out)
        with pytest.raises(RuntimeError, match="not two answers and the variable"):
            tf_env.onednn_decision("0", then="1")
    monkeypatch.setattr(tf_env, "_run_child", lambda *a, **k: ['[false, false, "0"]'])
    with pytest.raises(RuntimeError, match="was '0' at the second question, not '1'"):
        tf_env.onednn_decision("0", then="1")
    assert tf_env.onednn_decision("0") == (False, False)  # then=None: the start value


def test_without_onednn_the_functions_answer_as_such_a_build(monkeypatch):
    from matgrad import tf_env

    monkeypatch.setenv(tf_env.WITHOUT_ONEDNN, "1")
    monkeypatch.setattr(tf_env, "_run_child", lambda *a, **k: pytest.fail("no child runs"))
    assert tf_env.onednn_in_build() is False
    assert tf_env.onednn_decision("1", then="0") == (False, False)
    with pytest.raises(RuntimeError, match="taken to have no oneDNN"):
        tf_env.onednn_seed_gradient()


@pytest.mark.tf
@pytest.mark.parametrize("page", ["appendix/onednn.md", "appendix/kernel_differences.md"])
def test_the_onednn_page_builds_with_a_tensorflow_without_onednn(tmp_path, page):
    """Each page's branch for TensorFlow builds without oneDNN (the macOS
    builds) runs, and says so, in an ordinary fresh kernel."""
    from pathlib import Path

    from conftest import execute_page

    nb = execute_page(Path(page), tmp_path, env={"MATGRAD_TF_WITHOUT_ONEDNN": "1"})
    printed = "".join(
        out.get("text", "") or str(out.get("data", {}).get("text/plain", ""))
        for cell in nb.cells
        for out in cell.get("outputs", [])
    )
    assert "built without oneDNN" in printed
    assert "oneDNN on, capped to AVX2" not in printed


def test_dyadic_text_writes_binary_fractions_exactly():
    from matgrad.floats import dyadic_text

    assert dyadic_text(Fraction(-11615089, 2**26)) == "-11615089/2²⁶"
    assert dyadic_text(Fraction(12)) == "3·2²"
    assert dyadic_text(Fraction(5)) == "5" and dyadic_text(Fraction(0)) == "0"
    row = examples.SEED_B[1]
    exact = sum(Fraction(float(v)) for v in row)
    num, power = dyadic_text(exact).split("/2")
    assert (
        Fraction(int(num), 2 ** int(power.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789"))))
        == exact
    )
    with pytest.raises(ValueError, match="power of two as denominator, got 1/3"):
        dyadic_text(Fraction(1, 3))
    with pytest.raises(TypeError, match="x must be a Fraction, got float"):
        dyadic_text(0.5)


def test_groupings_consistent_with_every_entry():
    from matgrad.floats import groupings_consistent_with

    sums = [three_term_sums(*row) for row in examples.SEED_B]
    lr = [s["(b0 + b1) + b2"] for s in sums]
    assert groupings_consistent_with(lr, sums)[0] == "(b0 + b1) + b2"
    ends = [s["(b0 + b2) + b1"] for s in sums]
    assert groupings_consistent_with(ends, sums) == ["(b0 + b2) + b1"]
    assert groupings_consistent_with([np.float32(7)] * 3, sums) == []
    assert "round(b0 + b1 + b2)" not in groupings_consistent_with(lr, sums)
    # With rounded=True the correctly rounded sum is a column too (a kernel
    # that adds in float64 and rounds once gives it), and only where it matches.
    rounded = [s["round(b0 + b1 + b2)"] for s in sums]
    assert "round(b0 + b1 + b2)" in groupings_consistent_with(rounded, sums, rounded=True)
    assert "round(b0 + b1 + b2)" not in groupings_consistent_with(rounded, sums)
    assert groupings_consistent_with([np.float32(7)] * 3, sums, rounded=True) == []
    with pytest.raises(ValueError, match="values has 2 entries and sums 3"):
        groupings_consistent_with(lr[:2], sums)


def test_groupings_table_shows_both_editions(shown):
    from matgrad.floats import groupings_table

    sums = groupings_table(examples.SEED_B)
    assert sums == [three_term_sums(*row) for row in examples.SEED_B]
    ((data, metadata),) = shown
    english, chinese = data["text/markdown"], metadata["matgrad"]["zh_CN"]["text/markdown"]
    assert english.splitlines()[0] == (
        "| row of B | exact sum | left to right | ends first | right to left | correctly rounded |"
    )
    assert "| 0 | -11615089/2²⁶ | -0.17307831 | -0.1730783 | -0.1730783 | -0.17307831 |" in english
    assert chinese.splitlines()[0].startswith("| B 的行 | 精确和 | 从左到右")
    assert english.splitlines()[2:] == chinese.splitlines()[2:]
    with pytest.raises(ValueError, match=r"an \(n, 3\) float array, got shape \(3,\)"):
        groupings_table(examples.SEED_B[0])


def test_settings_are_named_and_checked():
    from matgrad.tf_env import OneDNNRun, Setting, onednn_runs, onednn_seed_gradient, setting_name

    assert setting_name(*Setting(False)) == "(0, default)"
    assert setting_name(*Setting(True, "SSE41")) == "(1, SSE41)"
    assert setting_name(False, None, True, None) == "(0, default) + test switch"
    assert setting_name(False, intra_op_threads=2) == "(0, default) + 2 threads"
    assert setting_name(False, None, True, 1) == "(0, default) + test switch + 1 thread"
    assert Setting(True) == (True, None, False, None)
    run = OneDNNRun(
        np.zeros((5, 3)),
        "x",
        sgemm_products=("longer", "gradient", "longer"),
        sgemm_shapes=("",) * 3,
    )
    assert run.calls("longer") == [0, 2] and run.calls("long sums") == []
    with pytest.raises(ValueError, match="product must be one of"):
        run.calls("Bᵀ")
    with pytest.raises(ValueError, match=r"a setting is \(custom_ops, max_cpu_isa"):
        onednn_runs([(True,)])
    with pytest.raises(ValueError, match=r"a setting is \(custom_ops, max_cpu_isa"):
        onednn_runs([(True, None, False, None, 1)])
    with pytest.raises(TypeError, match="custom_ops must be True or False, got 'yes'"):
        onednn_seed_gradient(custom_ops="yes")
    with pytest.raises(TypeError, match="test_switch must be True or False, got 0"):
        onednn_seed_gradient(test_switch=0)
    with pytest.raises(TypeError, match="intra_op_threads must be an int or None, got True"):
        onednn_seed_gradient(intra_op_threads=True)
    with pytest.raises(ValueError, match="intra_op_threads must be at least 1, got 0"):
        onednn_seed_gradient(intra_op_threads=0)


def test_a_child_computes_only_the_products_asked_for(monkeypatch):
    """onednn_runs(products=...) hands the child only those names, leaves the
    other arrays empty, and names a bad argument."""
    import base64
    import json

    from matgrad import tf_env
    from matgrad.tf_env import PRODUCTS, Setting, onednn_runs

    asked = []

    def child(env, timeout, args=(), stderr=None):
        asked.append(json.loads(args[0]))
        x = np.ones((5, 3), np.float32)
        data = base64.b64encode(x.tobytes()).decode()
        arrays = {"gradient": [[5, 3], data]}
        return [
            tf_env._PRODUCT_MARK + "gradient",
            json.dumps({"switch": [False] * 2, "arrays": arrays}),
        ]

    monkeypatch.setattr(tf_env, "_run_child", child)
    run = onednn_runs([Setting(False)], products=["gradient"])[Setting(False)]
    assert asked == [{"products": ["gradient"], "settings": [[0, {}]]}]
    assert run.gradient.shape == (5, 3) and run.long_product.size == run.long_sums.size == 0
    onednn_runs([Setting(False)])
    assert asked[-1]["products"] == list(PRODUCTS)
    with pytest.raises(TypeError, match="products must be a list or tuple of names"):
        onednn_runs([Setting(False)], products="gradient")
    for bad in ([], ["gradient", "gradient"], ["Bᵀ"]):
        with pytest.raises(ValueError, match="products must name distinct products"):
            onednn_runs([Setting(False)], products=bad)


@pytest.mark.tf
def test_onednn_runs_report_layouts_and_stay_in_the_groupings():
    """Custom operations on: the backward sgemm gets B with the transpose
    flag (ba); off: on x86 builds, Eigen's contraction calls sgemm without
    it (ab). Which digit comes out is the machine's; the groupings hold.
    With one intra-op thread, route 1 adds each long sum as one partial sum;
    with the test switch, oneDNN logs no sgemm call. grad_a changes nothing."""
    import platform

    from matgrad.tf_env import LONG_SUM_TERMS, PRODUCTS, Setting, onednn_in_build, onednn_runs

    if not onednn_in_build():
        pytest.skip("this TensorFlow was built without oneDNN")
    on, one_thread = Setting(True, "AVX2"), Setting(False, None, False, 1)
    own, capped = Setting(False, test_switch=True), Setting(False, "SSE41")
    # (on Linux the four settings with custom_ops False share one import of
    # TensorFlow and fork after it: the cap and the test switch still apply)
    runs = onednn_runs([(False, None), on, one_thread, own, capped])
    sums = [three_term_sums(*row) for row in examples.SEED_B]
    for run in runs.values():
        for row in (run.gradient[0], run.transposed_first[0]):
            assert all(v in s.values() for v, s in zip(row, sums, strict=True)), row
        np.testing.assert_array_equal(run.long_gradient, run.long_product)
        assert run.long_product.shape == (64, 300) and run.long_sums.shape == (8, 8)
        n = len(run.sgemm_shapes)
        assert len(run.sgemm_layouts) == len(run.sgemm_products) == len(run.sgemm_accumulates) == n
        assert set(run.sgemm_products) <= set(PRODUCTS)
        # the puzzle's products are the puzzle's shape
        for product in ("transposed first", "gradient"):
            assert {run.sgemm_shapes[i] for i in run.calls(product)} <= {"5x3:3x3"}
    assert runs[on].sgemm_layouts[runs[on].calls("gradient")[-1]] == "ba"
    assert runs[own].sgemm_shapes == () and runs[own].isa == "unknown"
    if platform.machine() in ("x86_64", "AMD64"):
        assert [runs[on].sgemm_shapes[i] for i in runs[on].calls("longer")] == ["64x300:300x300"]
        calls = runs[one_thread].calls("long sums")
        assert sum(not runs[one_thread].sgemm_accumulates[i] for i in calls) == 1
        ks = [int(runs[one_thread].sgemm_shapes[i].split(":")[1].split("x")[0]) for i in calls]
        assert sum(ks) == LONG_SUM_TERMS
    operands = runs[on].sgemm_operands
    assert len(operands) == len(runs[on].sgemm_layouts)
    assert operands[-1].split() == [
        "src_f32::blocked:ab:f0",
        "wei_f32::blocked:ba:f0",
        "dst_f32::blocked:ab:f0",
    ]
    # TensorFlow decided during the import: flipping the variable changes nothing.
    assert runs[on].switch == (True, True)
    assert runs[Setting(False)].switch == (False, False)
    assert "AVX2" in runs[on].isa
    if platform.machine() in ("x86_64", "AMD64"):
        assert runs[Setting(False)].sgemm_layouts[-1] == "ab"
        assert runs[capped].isa == "Intel SSE4.1"


def test_settings_are_split_by_their_marks(monkeypatch):
    """One child's output for several settings is cut at its marks; a
    missing mark is an error, and no setting starts no child."""
    from matgrad import tf_env
    from matgrad.tf_env import Setting

    printed = [tf_env._SETTING_MARK + "0", "a", tf_env._SETTING_MARK + "1", "b", "c"]
    monkeypatch.setattr(tf_env, "_run_child", lambda *a, **k: printed)
    two = [Setting(False), Setting(False, "SSE41")]
    assert tf_env._group_lines(two, 1) == [["a"], ["b", "c"]]
    with pytest.raises(RuntimeError, match="printed 2 settings, not 3"):
        tf_env._group_lines([*two, Setting(False, test_switch=True)], 1)
    monkeypatch.setattr(tf_env, "_run_child", lambda *a, **k: pytest.fail("no child runs"))
    assert tf_env.onednn_runs([]) == {}


def test_a_childs_start_is_quiet_and_deterministic(monkeypatch):
    """What the oneDNN page's folds say of every child: it starts with
    TensorFlow's log level 3 and oneDNN's custom operations as its setting
    says, flips the variable right after the import (the switch has decided
    by then) and turns op determinism on."""
    from matgrad import tf_env
    from matgrad.tf_env import Setting

    seen = []

    def child(env, timeout, args=(), stderr=None):
        seen.append(env)
        return ["a"]

    monkeypatch.setattr(tf_env, "_run_child", child)
    for custom_ops in (False, True):
        assert tf_env._group_lines([Setting(custom_ops)], 1) == [["a"]]
        assert seen[-1]["TF_CPP_MIN_LOG_LEVEL"] == "3"
        assert seen[-1]["TF_ENABLE_ONEDNN_OPTS"] == ("1" if custom_ops else "0")
    assert 'os.environ["TF_ENABLE_ONEDNN_OPTS"] = flipped' in tf_env._CHILD
    assert "tf.config.experimental.enable_op_determinism()" in tf_env._CHILD


def test_sum_gap_bound_covers_every_grouping():
    from matgrad.floats import sum_gap_bound

    u = 2.0**-24
    bound = sum_gap_bound(examples.SEED_B)
    np.testing.assert_allclose(bound, 4 * u / (1 - 2 * u) * np.abs(examples.SEED_B).sum(axis=1))
    for row, b in zip(examples.SEED_B, bound, strict=True):
        values = [np.float64(v) for v in three_term_sums(*row).values()]
        assert max(values) - min(values) <= b
    # relative to the sum, row 0's bound exceeds 1e-6: the sum cancels
    assert bound[0] / abs(examples.EXPECTED_SEED_GRAD_ROW[0]) > 1e-6
    assert sum_gap_bound(np.ones((2, 4)), np.float64).shape == (2,)
    with pytest.raises(TypeError, match="dtype must be float16, float32 or float64"):
        sum_gap_bound(examples.SEED_B, np.int32)
    with pytest.raises(ValueError, match="at least one term"):
        sum_gap_bound(np.zeros((3, 0)))


@given(finite32, finite32, finite32)
def test_sum_gap_bound_holds_for_any_three_terms(a, b, c):
    from matgrad.floats import sum_gap_bound

    sums = [
        np.float64(v) for v in three_term_sums(np.float32(a), np.float32(b), np.float32(c)).values()
    ]
    assert max(sums) - min(sums) <= sum_gap_bound(np.float32([a, b, c]))

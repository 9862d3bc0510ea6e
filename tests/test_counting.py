"""matgrad.counting: multiplication counts of products, and the tape's counted passes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matgrad.counting import MultiplicationCounter, matmul, matmul_multiplications, multiply
from matgrad.tape import Tape


def _brute_matmul_count(a_shape, b_shape):
    """Count by doing the product with ones: every entry of a @ b is a sum of k ones."""
    a, b = np.ones(a_shape), np.ones(b_shape)
    out = a @ b
    return int(np.sum(out))  # each multiplication contributes 1*1 to exactly one entry


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    m=st.integers(1, 4),
    k=st.integers(1, 4),
    n=st.integers(1, 4),
    drop_a=st.booleans(),
    drop_b=st.booleans(),
    vec=st.sampled_from([None, "a", "b"]),
)
def test_matmul_count_equals_a_brute_force_count(batch, m, k, n, drop_a, drop_b, vec):
    a_shape = (() if drop_a else tuple(batch)) + (m, k)
    b_shape = (() if drop_b else tuple(batch)) + (k, n)
    if vec == "a":
        a_shape = (k,)
    elif vec == "b":
        b_shape = (k,)
    assert matmul_multiplications(a_shape, b_shape) == _brute_matmul_count(a_shape, b_shape)


def test_counter_counts_products_and_nests():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    with MultiplicationCounter() as outer:
        np.testing.assert_array_equal(matmul(a, b), a @ b)
        with MultiplicationCounter() as inner:
            np.testing.assert_array_equal(multiply(a, np.ones((1, 3))), a)
    assert inner.by_op == {"matmul": 0, "multiply": 6}
    assert outer.by_op == {"matmul": 24, "multiply": 6}
    assert outer.total == 30
    with MultiplicationCounter() as after:
        pass
    matmul(a, b)  # no counter open: nothing counted, nothing kept
    assert after.total == 0 and outer.total == 30


def test_tape_gradient_of_a_chain_costs_three_times_the_function():
    rng = np.random.default_rng(0)
    n, k = 4, 3
    X0, A = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    with MultiplicationCounter() as count:
        with Tape() as tape:
            X = tape.watch(X0)
            Y = X
            for _ in range(k):
                Y = Y @ A
            L = (Y * Y).sum()
        forward = count.total
        g = tape.gradient(L, X)
    assert forward == k * n**3 + n**2
    assert count.total == 3 * forward  # each product's VJP is two products of its size
    M = np.linalg.matrix_power(A, k)
    np.testing.assert_allclose(g, 2 * (X0 @ M) @ M.T, rtol=1e-12)


@pytest.mark.parametrize(
    "a_shape, b_shape, words",
    [
        ((2, 3), (4, 5), "inner axes differ"),
        ((), (3, 3), "rank >= 1"),
        ((2, 2, 3), (3, 3, 4), "batch axes do not broadcast"),
    ],
)
def test_bad_shapes_raise_value_error_naming_both(a_shape, b_shape, words):
    with pytest.raises(ValueError, match=words) as info:
        matmul_multiplications(a_shape, b_shape)
    assert str(a_shape) in str(info.value) and str(b_shape) in str(info.value)


def test_graph_matmul_multiplications_counts_only_what_the_outputs_need():
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import graph_matmul_multiplications, graph_matmul_shapes

    def f(a, b):
        tf.matmul(a, a, transpose_b=True)  # not needed by the output: not counted
        return tf.matmul(a, b, transpose_a=True)  # (3, 2)^T @ (2, 4): 3 * 2 * 4

    specs = [tf.TensorSpec((2, 3), tf.float32), tf.TensorSpec((2, 4), tf.float32)]
    graph = tf.function(f).get_concrete_function(*specs).graph
    assert [op.type for op in graph.get_operations()].count("MatMul") == 2
    assert graph_matmul_multiplications(graph) == [24]
    assert graph_matmul_shapes(graph) == [((3, 2), (2, 4))]  # transpose_a applied
    specs = [tf.TensorSpec((None, 3), tf.float32), tf.TensorSpec((None, 4), tf.float32)]
    unknown = tf.function(f).get_concrete_function(*specs).graph
    with pytest.raises(ValueError, match="MatMul .* has an operand of shape"):
        graph_matmul_multiplications(unknown)
    with pytest.raises(TypeError, match="graph must be a traced FuncGraph"):
        graph_matmul_shapes([[1, 2]])


def test_nested_matmul_multiplications_descends_into_loops_and_calls():
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import nested_matmul_multiplications

    inner = tf.function(lambda a: tf.matmul(a, a, transpose_a=True))  # (3, 2) @ (2, 3)

    def f(a, b):
        tf.matmul(a, b, transpose_a=True)  # not needed by the output: still listed
        i, x = tf.while_loop(
            lambda i, x: i < 2, lambda i, x: (i + 1, tf.matmul(x, x)), (0, tf.eye(3))
        )
        return inner(a) + x

    specs = [tf.TensorSpec((2, 3), tf.float32), tf.TensorSpec((2, 4), tf.float32)]
    graph = tf.function(f).get_concrete_function(*specs).graph
    assert sorted(nested_matmul_multiplications(graph)) == [18, 24, 27]
    assert nested_matmul_multiplications(graph, "no such name") == []
    with pytest.raises(TypeError, match="graph must be a traced FuncGraph"):
        nested_matmul_multiplications([[1, 2]])


def test_eager_matmul_multiplications_applies_the_transpose_flags():
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import eager_matmul_multiplications, eager_ops

    a, b = tf.ones((2, 3)), tf.ones((2, 4))
    with eager_ops() as ran:
        tf.matmul(a, b, transpose_a=True)  # (3, 2) @ (2, 4): 24
        tf.matmul(a, a, transpose_b=True)  # (2, 3) @ (3, 2): 12
        a * a  # not a MatMul
    assert eager_matmul_multiplications(ran) == [24, 12]


def test_needed_operations_drops_what_the_outputs_do_not_read():
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import needed_operations

    def f(a, b):
        unused = a * a  # a Mul that no output reads
        del unused
        return tf.reduce_sum(a * b)

    specs = [tf.TensorSpec((2, 3), tf.float32)] * 2
    graph = tf.function(f).get_concrete_function(*specs).graph
    assert [op.type for op in graph.get_operations()].count("Mul") == 2
    needed = needed_operations(graph)
    assert [op.type for op in needed].count("Mul") == 1
    order = graph.get_operations()
    assert needed == [op for op in order if op in needed]  # the graph's order
    with pytest.raises(TypeError, match="needs a traced graph"):
        needed_operations([1, 2])


def test_eager_ops_lists_eager_operations_only_and_removes_its_callback():
    import tensorflow as tf

    from matgrad.counting import eager_ops

    a, b = tf.ones((2, 3)), tf.ones((3, 4))
    traced = tf.function(lambda x: x * 2.0)
    with eager_ops() as executed:
        tf.matmul(a, b, transpose_b=False)
        traced.get_concrete_function(tf.TensorSpec((2,)))  # built, not executed
    assert [op.type for op in executed] == ["MatMul"]
    assert executed[0].input_shapes == ((2, 3), (3, 4))
    assert executed[0].attrs["transpose_b"] is False
    with pytest.raises(RuntimeError), eager_ops() as inner:
        raise RuntimeError
    tf.matmul(a, b)
    assert inner == []  # the callback is gone after an exception


def test_executed_kernels_sees_eager_and_compiled_products():
    # Sin: no oneDNN rewrite renames it, whatever TF_ENABLE_ONEDNN_OPTS says;
    # two separate Sin ops (Grappler would compose a chain sin(sin(x)) into one).
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import executed_kernels

    a = tf.ones((2, 3))
    compiled = tf.function(lambda x: tf.sin(x) * tf.sin(x + 1))
    compiled(a)  # traced before counting

    def run():
        tf.sin(a)  # one eager op
        compiled(a)  # two inside a function

    assert executed_kernels(run, "Sin") == 3
    assert executed_kernels(lambda: None) == 0
    with pytest.raises(TypeError, match="run must be callable"):
        executed_kernels(3)
    with pytest.raises(TypeError, match="op_type must be a non-empty string"):
        executed_kernels(run, op_type="")


def test_executed_kernel_names_name_the_nodes_that_ran():
    tf = pytest.importorskip("tensorflow")
    from matgrad.counting import executed_kernel_names

    a = tf.ones((2, 3))
    compiled = tf.function(lambda x: tf.sin(x, name="first") * tf.sin(x + 1))
    compiled(a)  # traced before reading
    names = executed_kernel_names(lambda: compiled(a))
    sins = [name for name in names if name.endswith(":Sin")]
    assert len(sins) == 2, names
    assert any(name.startswith("first") for name in sins), sins
    # the two Sin kernels are independent, so either may run first
    assert sorted(executed_kernel_names(lambda: compiled(a), "Sin")) == sorted(sins)
    assert executed_kernel_names(lambda: tf.sin(a), "Sin") == ["EagerLocalExecute: Sin"]
    assert executed_kernel_names(lambda: compiled(a), "MatMul") == []
    assert [n for n in executed_kernel_names(lambda: None) if ":" in n] == []
    with pytest.raises(TypeError, match="run must be callable"):
        executed_kernel_names(3)
    with pytest.raises(TypeError, match="op_type must be a non-empty string"):
        executed_kernel_names(lambda: None, "")


def test_jaxpr_products_lists_each_products_shapes_and_multiplications():
    import jax.numpy as jnp

    from matgrad.counting import jaxpr_products

    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4,))
    found = jaxpr_products(lambda a, b, c: jnp.tanh(a @ b) @ c, a, b, c)
    assert found == [(((2, 3), (3, 4)), 2 * 3 * 4), (((2, 4), (4,)), 2 * 4)]
    assert jaxpr_products(lambda a: a + 1, a) == []
    with pytest.raises(TypeError, match="f must be callable, got int"):
        jaxpr_products(3, a)

"""matgrad.registry reads TensorFlow's gradient registry."""

import pytest

tf = pytest.importorskip("tensorflow")

from matgrad import registry  # noqa: E402


def test_registered_rule_and_status():
    from tensorflow.python.framework import ops

    assert registry.registered_rule("MatMul") is ops.gradient_registry.lookup("MatMul")
    assert registry.registered_rule("MatMul").__name__ == "_MatMulGrad"
    assert registry.registered_rule("Shape") is None
    with pytest.raises(LookupError):
        registry.registered_rule("NoSuchOpType")
    assert registry.gradient_status("MatMul") == "gradient registered"
    assert registry.gradient_status("Greater") == "not differentiable"
    assert registry.gradient_status("NoSuchOpType") == "no gradient registered"


def test_op_types_of_a_dense_layer_and_a_step():
    def dense(x, w, b):
        return tf.nn.bias_add(x @ w, b)

    assert registry.op_types(dense, (4, 3), (3, 2), 2) == {
        "MatMul": "gradient registered",
        "BiasAdd": "gradient registered",
    }
    step = registry.op_types(lambda a: tf.cast(a > 0, a.dtype), (3, 3))
    assert step == {"Greater": "not differentiable", "Cast": "gradient registered"}
    assert list(registry.op_types(tf.abs, (3,), dtype=tf.complex128)) == ["ComplexAbs"]


@pytest.mark.parametrize(
    "call, error, word",
    [
        (lambda: registry.registered_rule(3), TypeError, "op_type"),
        (lambda: registry.registered_rule(""), ValueError, "op_type"),
        (lambda: registry.gradient_status(None), TypeError, "op_type"),
        (lambda: registry.op_types("tf.abs", (3,)), TypeError, "fn"),
        (lambda: registry.op_types(tf.abs, [3]), TypeError, "shape"),
        (lambda: registry.op_types(tf.abs, (3, -1)), ValueError, "shape"),
    ],
)
def test_bad_arguments(call, error, word):
    with pytest.raises(error, match=word):
        call()

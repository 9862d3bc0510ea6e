"""Helpers for the book *Gradients of matrices*.

Submodules are imported on demand so that the SymPy chapters and the unit
tests never pay for importing TensorFlow:

>>> from matgrad import examples, symbolic, jacobian, vjp, tape   # no TensorFlow
>>> from matgrad import tf_matmul                                 # imports TensorFlow
>>> from matgrad import linalg_grads                              # NumPy rules, no TensorFlow
>>> from matgrad import checking                                  # TensorFlow when a check runs
>>> from matgrad import hvp                                       # imports TensorFlow
"""

__version__ = "0.1.0"
__all__ = [
    "examples",
    "symbolic",
    "jacobian",
    "vjp",
    "tape",
    "tf_matmul",
    "tf_env",
    "plotting",
    "timing",
    "floats",
    "linalg_grads",
    "checking",
    "hvp",
]


def __getattr__(name):
    """``matgrad.check_rule`` is :func:`matgrad.checking.check_rule`, imported on first use."""
    if name == "check_rule":
        from .checking import check_rule

        return check_rule
    raise AttributeError(f"module 'matgrad' has no attribute {name!r}")

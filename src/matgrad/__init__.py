"""Helpers for the book *Gradients of matrices*.

Submodules are imported on demand so that the SymPy chapters and the unit
tests never pay for importing TensorFlow:

>>> from matgrad import examples, symbolic, jacobian, vjp, tape   # no TensorFlow
>>> from matgrad import tf_matmul                                 # imports TensorFlow
"""

__version__ = "0.1.0"
__all__ = [
    "examples", "symbolic", "jacobian", "vjp", "tape", "tf_matmul", "tf_env", "plotting", "timing",
    "floats",
]

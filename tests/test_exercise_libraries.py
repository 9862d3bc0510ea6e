"""_ext/exercise_libraries.py: the libraries a solution's code calls, found
by following its calls, not by matching names or comments."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
from exercise_libraries import libraries, solution_code  # noqa: E402

MATGRAD = ROOT / "src" / "matgrad"


def page(before: str, solution: str, label: str = "ex-a") -> str:
    """A page with one code cell, then exercise ``label``'s solution."""
    cell = "```{code-cell} ipython3\n%s\n```\n"
    return (
        (cell % before)
        + f"\n```{{exercise}} A\n:label: {label}\n\nAsk.\n```\n\n"
        + f"````{{solution-start}} {label}\n:class: dropdown\n````\n\n"
        + (cell % solution)
        + "\n````{solution-end}\n````\n"
    )


def test_a_module_called_directly():
    text = page("import numpy as np\nimport tensorflow as tf", "np.ones(3)")
    assert libraries(text, "ex-a") == ["NumPy"]


def test_comments_and_unused_imports_do_not_count():
    text = page("import tensorflow as tf\nimport jax", "# tf.gradient, jax.grad\nx = 1 + 2\nx")
    assert libraries(text, "ex-a") == []


def test_a_page_function_is_followed_through_two_levels():
    before = (
        "import jax\nimport jax.numpy as jnp\n"
        "def inner(x):\n    return jnp.sin(x)\n"
        "def outer(x):\n    return inner(x) + 1\n"
    )
    assert libraries(page(before, "outer(1.0)"), "ex-a") == ["JAX"]


def test_an_object_is_followed_to_its_making():
    before = "import tensorflow as tf\nT = tf.ones((2, 2))"
    solution = (
        "with tf.GradientTape() as tape:\n    tape.watch(T)\n    Y = T * T\ntape.gradient(Y, T)"
    )
    assert libraries(page(before, solution), "ex-a") == ["TensorFlow"]
    # a tape made before the solution is followed the same way
    before += "\nwith tf.GradientTape(persistent=True) as tape:\n    tape.watch(T)\n    Y = T * T"
    assert libraries(page(before, "tape.gradient(Y, T)"), "ex-a") == ["TensorFlow"]


def test_data_made_by_another_library_is_not_a_call_of_it():
    before = "import numpy as np\nimport tensorflow as tf\nH = tf.eye(3).numpy()"
    solution = "np.abs(H - H.T).max()"
    assert libraries(page(before, solution), "ex-a") == ["NumPy"]
    # a method of the array .numpy() returned is NumPy's
    assert libraries(page(before, "H.sum()"), "ex-a") == ["NumPy"]


def test_a_function_passed_as_an_argument_is_followed():
    before = "import jax\nimport numpy as np\nloss = lambda w: np.sum(w**2)"
    assert libraries(page(before, "jax.grad(loss)(1.0)"), "ex-a") == ["JAX", "NumPy"]


def test_matgrad_functions_are_followed_into_their_source():
    before = (
        "from matgrad.symbolic import symbol_matrix\nfrom matgrad.jacobian import numeric_jacobian"
    )
    assert libraries(page(before, "symbol_matrix('s', (2, 2))"), "ex-a", MATGRAD) == ["SymPy"]
    assert libraries(page(before, "numeric_jacobian(abs, 1.0)"), "ex-a", MATGRAD) == ["NumPy"]
    # the source not given: nothing is guessed
    assert libraries(page(before, "symbol_matrix('s', (2, 2))"), "ex-a") == []


def test_the_last_definition_before_the_solution_wins():
    before = "import numpy as np\nimport jax.numpy as jnp\nf = jnp.sin\nf = np.sin"
    assert libraries(page(before, "f(1.0)"), "ex-a") == ["NumPy"]


def test_only_the_named_solution_is_read():
    two = page("import numpy as np", "np.ones(2)") + page("import jax", "jax.numpy.ones(2)", "ex-b")
    assert libraries(two, "ex-a") == ["NumPy"]
    assert libraries(two, "ex-b") == ["JAX"]


def test_bad_input():
    with pytest.raises(ValueError, match="no solution"):
        solution_code(page("", "1"), "ex-missing")
    with pytest.raises(TypeError):
        libraries(None, "ex-a")


def test_the_books_exercises():
    """Three of the book's solutions whose libraries a name match got wrong."""
    text = (ROOT / "chapters" / "01_symbolic.md").read_text(encoding="utf-8")
    assert libraries(text, "sympy-ex-square", MATGRAD) == ["SymPy", "NumPy"]
    text = (ROOT / "chapters" / "03_jacobian_chains.md").read_text(encoding="utf-8")
    assert libraries(text, "jc-ex-tall", MATGRAD) == []  # chain_cost: plain Python
    text = (ROOT / "further" / "second_derivatives.md").read_text(encoding="utf-8")
    assert libraries(text, "sd-ex-symmetry", MATGRAD) == ["TensorFlow", "NumPy"]

"""The libraries an exercise's solution calls, for the "All exercises" page.

``{exercise-libraries}`label``` stands for the libraries (TensorFlow, JAX,
SymPy, NumPy) whose code runs when the solution of exercise ``label`` runs,
or "Python" when it calls none of them.
They are read from the code, not from its comments or names: the solution's
code cells and the page's code cells before it are parsed (``ast``), and
every call the solution makes is followed to where its callee comes from:

- a module imported under that name (``tf.``, ``np.linalg.``, ``jax.``);
- a function or lambda defined on the page, whose body is followed in turn;
- an object made on the page (``tape`` of ``with tf.GradientTape() as
  tape``, ``rng = np.random.default_rng()``), whose making is followed;
- a function imported from ``matgrad``, whose body in ``src/matgrad`` is
  followed in turn, with its module's imports.

A function passed as an argument (``jax.grad(loss)``) is followed too, since
the callee calls it. Values passed as plain data are not: a NumPy check of
an array that TensorFlow made earlier calls NumPy only.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

# top-level package -> the name the list shows, in the order it shows them
LIBRARIES = {"tensorflow": "TensorFlow", "jax": "JAX", "sympy": "SymPy", "numpy": "NumPy"}

_CODE = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def _cells(text: str) -> list[str]:
    """The Python of a page's code cells (cell options and magics left out)."""
    cells = []
    for body in _CODE.findall(text):
        lines = body.splitlines()
        if lines and lines[0] == "---":  # a YAML block of options
            lines = lines[lines.index("---", 1) + 1 :]
        lines = ["" if line.startswith((":", "%", "!")) else line for line in lines]
        cells.append("\n".join(lines))
    return cells


def solution_code(page_text: str, label: str) -> tuple[list[str], list[str]]:
    """(the page's code cells before the solution, the solution's cells)."""
    if not isinstance(page_text, str) or not isinstance(label, str):
        raise TypeError("page_text and label must be strings")
    start = re.search(rf"````\{{solution-start\}} {re.escape(label)}\n", page_text)
    if start is None:
        raise ValueError(f"no solution of {label!r} on this page")
    end = page_text.index("````{solution-end}", start.end())
    return _cells(page_text[: start.start()]), _cells(page_text[start.end() : end])


class _Scope:
    """The names bound by a sequence of statements: name -> what binds it,
    the last binding winning, as when the cells run in order."""

    def __init__(self, module: str | None = None):
        self.bindings: dict[str, tuple[str, object]] = {}
        self.module = module  # the matgrad module these statements are in

    def bind_statements(self, statements):
        for statement in statements:
            self.bind(statement)

    def bind(self, node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._bind_import(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bindings[node.name] = ("code", node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None:
                self._bind_names(targets, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._bind_names([node.target], node.iter)
            self.bind_statements(node.body + node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind_names([item.optional_vars], item.context_expr)
            self.bind_statements(node.body)
        elif isinstance(node, (ast.If, ast.Try)):
            handlers = [h.body for h in getattr(node, "handlers", [])]
            blocks = [node.body, node.orelse, getattr(node, "finalbody", []), *handlers]
            for block in blocks:
                self.bind_statements(block)

    def _bind_names(self, targets, value):
        for target in targets:
            for name in _names(target):
                self.bindings[name] = ("code", value)

    def _bind_import(self, node):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                self.bindings[alias.asname or top] = ("module", alias.name if alias.asname else top)
            return
        module = node.module or ""
        if node.level and self.module:  # from .jacobian import ...
            package = self.module.rsplit(".", node.level)[0]
            module = f"{package}.{module}" if module else package
        for alias in node.names:
            self.bindings[alias.asname or alias.name] = ("from", (module, alias.name))


def _names(target) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _root(node) -> str | None:
    """The name an expression such as ``np.linalg.solve`` or ``x[0].numpy``
    starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _called_roots(tree) -> tuple[set[str], set[str]]:
    """The names that the code calls, calls a method of, enters as a
    context or decorates with; and the names it passes to a call (followed
    only when they name a function, which the callee may call)."""
    called, passed = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called.add(_root(node.func))
            passed.update(_root(arg) for arg in [*node.args, *(k.value for k in node.keywords)])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            called.update(_root(d) for d in node.decorator_list)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            called.update(_root(item.context_expr) for item in node.items)
    return called - {None}, passed - called - {None}


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _is_numpy_call(node) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "numpy"
        and not node.args
    )


class _Resolver:
    def __init__(self, matgrad_root: Path | None):
        self.matgrad_root = matgrad_root
        self.found: set[str] = set()
        self.seen: set[tuple] = set()
        self.modules: dict[str, tuple[_Scope, dict]] = {}

    def follow(self, tree, scope: _Scope):
        called, passed = _called_roots(tree)
        for name in called:
            self.resolve(name, scope)
        for name in passed:
            kind, what = scope.bindings.get(name, ("code", None))
            if kind != "code" or isinstance(what, _FUNCTIONS):
                self.resolve(name, scope)

    def resolve(self, name: str, scope: _Scope):
        binding = scope.bindings.get(name)
        if binding is None or (id(scope), name) in self.seen:
            return
        self.seen.add((id(scope), name))
        kind, what = binding
        if kind == "module":
            self.module_used(what)
        elif kind == "from":
            module, attribute = what
            self.module_used(module, attribute)
        elif _is_numpy_call(what):  # x = tensor.numpy(): a NumPy array
            self.found.add("numpy")
        else:
            if isinstance(what, (ast.Name, ast.Attribute, ast.Subscript)):
                self.resolve(_root(what), scope)  # f = np.sin: an alias
            self.follow(what, scope)

    def module_used(self, module: str, attribute: str | None = None):
        package = module.partition(".")[0]
        if package in LIBRARIES:
            self.found.add(package)
        elif package == "matgrad" and attribute is not None:
            self.matgrad_function(module, attribute)
        elif package == "matgrad":  # import matgrad.x as mx: all of it
            scope, _ = self._matgrad_module(module)
            for name in list(scope.bindings):
                self.resolve(name, scope)

    def _matgrad_module(self, module: str):
        if module not in self.modules:
            path = None
            if self.matgrad_root is not None:
                parts = module.split(".")[1:]
                path = self.matgrad_root.joinpath(*parts).with_suffix(".py")
                if not path.exists():
                    path = self.matgrad_root.joinpath(*parts, "__init__.py")
            source = path.read_text(encoding="utf-8") if path is not None and path.exists() else ""
            self.modules[module] = _module_scope(module, source), {}
        return self.modules[module]

    def matgrad_function(self, module: str, name: str):
        scope, _ = self._matgrad_module(module)
        if name in scope.bindings:
            self.resolve(name, scope)
        else:  # a submodule imported by name: from matgrad import jacobian
            self.module_used(f"{module}.{name}")


# Both are called with the same text for each exercise of a page and each
# page of an edition (about sixty times); neither changes what it is given.
@functools.cache
def _parse(source: str) -> ast.Module:
    return ast.parse(source)


@functools.cache
def _module_scope(module: str, source: str) -> _Scope:
    """The names a matgrad module's ``source`` binds, with the imports inside its functions."""
    scope = _Scope(module)
    tree = _parse(source)
    scope.bind_statements(tree.body)
    for node in ast.walk(tree):  # imports inside functions too
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scope.bind(node)
    return scope


def libraries(page_text: str, label: str, matgrad_root: Path | None = None) -> list[str]:
    """The libraries whose code runs when the solution of ``label`` runs,
    in the order of ``LIBRARIES`` (see the module's docstring).

    ``matgrad_root`` is the ``src/matgrad`` folder; without it, a function
    imported from matgrad is not followed."""
    before, solution = solution_code(page_text, label)
    scope = _Scope()
    resolver = _Resolver(matgrad_root)
    for cell in before:
        scope.bind_statements(_parse(cell).body)
    trees = [_parse(cell) for cell in solution]
    for tree in trees:
        scope.bind_statements(tree.body)
    for tree in trees:
        resolver.follow(tree, scope)
    return [LIBRARIES[p] for p in LIBRARIES if p in resolver.found]


# The role.

ROLE = "exercise-libraries"


def _role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """A placeholder, filled once every page has been read."""
    xref = addnodes.pending_xref(
        rawtext, refdomain="", reftype=ROLE, reftarget="", exercise=text.strip()
    )
    xref += nodes.Text(text.strip())
    return [xref], []


class FillExerciseLibraries(SphinxPostTransform):
    """Replace each placeholder by the libraries, as inline code, before
    cross-references are resolved (10)."""

    default_priority = 5

    def run(self, **kwargs):
        labels = self.env.get_domain("std").labels
        root = Path(self.env.srcdir) / "src" / "matgrad"
        for node in _placeholders(self.document):
            label = node["exercise"]
            if label not in labels:
                raise ValueError(f"{ROLE}: no exercise labelled {label!r}")
            page = Path(self.env.doc2path(labels[label][0]))
            found = libraries(page.read_text(encoding="utf-8"), label, root) or ["Python"]
            comma = "、" if (self.env.config.language or "").startswith("zh") else ", "
            node.replace_self(nodes.Text(comma.join(found)))


def _placeholders(document):
    return [n for n in document.findall(addnodes.pending_xref) if n.get("reftype") == ROLE]


def _note_user(app, document):
    if _placeholders(document):
        if not hasattr(app.env, "matgrad_libraries_users"):
            app.env.matgrad_libraries_users = set()
        app.env.matgrad_libraries_users.add(app.env.docname)


def _merge(app, env, docnames, other):
    users = getattr(other, "matgrad_libraries_users", set()) & set(docnames)
    env.matgrad_libraries_users = getattr(env, "matgrad_libraries_users", set()) | users


def _users_of_the_role(app, env, added, changed, removed):
    """The pages that use the role are read again when any page is."""
    if not (added or changed or removed):
        return []
    users = getattr(env, "matgrad_libraries_users", set())
    return sorted(users - set(added) - set(changed))


def setup(app):
    app.add_role(ROLE, _role)
    app.add_post_transform(FillExerciseLibraries)
    app.connect("doctree-read", _note_user)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _users_of_the_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

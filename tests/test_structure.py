"""helpers' imports flow one way: no module imports, directly or through others, one that imports it.

Read from the source with ast (importing would hide an order problem behind Python's module cache):
every `import helpers.x` / `from helpers[.x] import y` at any depth of a module is an edge. A cycle
means one of its modules is half-initialised while the other runs; a dynamic import (importlib,
pkgutil, __import__) hides an edge from readers and from this test, so there is none.

And across the repository: no Python file changes sys.path, and the benchmarks import no test module.
"""

import ast
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent.parent / "helpers"


def module_name(path):
    parts = path.relative_to(HELPERS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(HELPERS.rglob("*.py"))}


def imported(name):
    """The helpers modules `name` imports; `from helpers import plots` is an edge to helpers.plots alone."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom) and node.module in MODULES:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & MODULES.keys()
            found |= submodules or {node.module}
    return found - {name}


def cycles(edges):
    """Depth-first search over {module: modules it imports}; each back edge closes a cycle, shown as its path."""
    state, found = {}, []

    def visit(name, path):
        state[name] = "open"
        for target in sorted(edges[name]):
            if state.get(target) == "open":
                found.append(" -> ".join(path[path.index(target) :] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    return found


def test_the_helpers_imports_have_no_cycle():
    found = cycles({name: imported(name) for name in MODULES})
    assert not found, "import cycles in helpers: " + "; ".join(found)


def test_a_cycle_is_found():
    """The search is not vacuous: the old wiring (exercises -> solutions -> a solution module -> exercises) is one."""
    old = {"exercises": {"solutions"}, "solutions": {"scalar_rnn"}, "scalar_rnn": {"exercises", "bugs"}, "bugs": set()}
    assert cycles(old) == ["exercises -> solutions -> scalar_rnn -> exercises"]
    assert cycles({**old, "scalar_rnn": {"bugs"}}) == []


@pytest.mark.parametrize("word", ["importlib", "pkgutil", "__import__", "import_module"])
def test_no_dynamic_import(word):
    """Every import is written out, where a reader (and test_the_helpers_imports_have_no_cycle) sees it."""
    users = [name for name, path in MODULES.items() if word in path.read_text()]
    assert not users, f"{', '.join(users)} use {word}"


def test_the_graph_is_read_at_all():
    """The reader finds known edges, so an empty graph cannot pass for an acyclic one."""
    assert {"helpers.solutions", "helpers.exercise_types", "helpers.checks"} <= imported("helpers.exercises")
    assert "helpers.exercise_types" in imported("helpers.solutions.scalar_rnn")
    assert "helpers.solutions.text_to_predictions" in imported("helpers.solutions")


REPO = HELPERS.parent
# What is not the project's own code: the venv, build outputs, caches.
NOT_OURS = {".venv", "build", ".git", "node_modules", "__pycache__"}
PY_FILES = sorted(
    path
    for path in REPO.rglob("*.py")
    if not NOT_OURS & set(path.relative_to(REPO).parts) and not path.relative_to(REPO).parts[0].endswith(".egg-info")
)


def is_sys_path(node):
    return isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys"


def path_changes(source):
    """Line numbers where the code changes sys.path: sys.path.insert/append/extend(...), sys.path[...] = ..., sys.path += ...."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_sys_path(node.func.value):
            if node.func.attr in {"insert", "append", "extend"}:
                found.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_sys_path(t) or (isinstance(t, ast.Subscript) and is_sys_path(t.value)) for t in targets):
                found.append(node.lineno)
    return sorted(found)


def test_no_python_file_changes_sys_path():
    """Sibling imports need no path trick: a script's own folder is first on the path, pytest adds slides/ and tools/
    (pyproject.toml's pythonpath), and make bench runs the benchmarks with PYTHONPATH=slides."""
    assert REPO / "slides" / "lab.py" in PY_FILES and len(PY_FILES) > 50  # the walk reaches the scripts
    found = [f"{path.relative_to(REPO)}:{line}" for path in PY_FILES for line in path_changes(path.read_text())]
    assert not found, "sys.path changed at " + ", ".join(found)


def test_a_sys_path_change_is_found():
    """The reader is not vacuous: each way of changing the path is caught, and a string that only mentions one is not."""
    source = "import sys\nsys.path.insert(0, 'a')\nsys.path.append('b')\nsys.path[:0] = ['c']\nsys.path += ['d']\n"
    assert path_changes(source) == [2, 3, 4, 5]
    assert path_changes("CODE = 'sys.path.insert(0, x)'\nprint(sys.path)\n") == []


def imported_modules(path):
    """Every module a file imports, at any depth: `from a.b import c` gives a.b."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


def test_the_benchmarks_import_nothing_from_the_tests():
    """What the benchmarks share with the browser tests (the server, the browser, Run All) lives in slides/lab.py."""
    imports = {path.name: imported_modules(path) for path in sorted((REPO / "benchmarks").glob("*.py"))}
    assert "lab" in imports["browser.py"]  # the reader sees the shared module
    found = [
        f"{name}: {module}"
        for name, modules in imports.items()
        for module in modules
        if module.split(".")[0] in {"tests", "conftest"} or module.split(".")[-1].startswith("test_")
    ]
    assert not found, "benchmarks import test modules: " + ", ".join(found)


def test_each_notebook_has_one_solution_module_named_after_it():
    """helpers.solutions.NOTEBOOKS holds one module per notebook, in order, named as the notebook without its number
    (scalar_rnn for 01_scalar_rnn.ipynb), with that notebook's exercises; any other module there builds shared parts."""
    from helpers import solutions

    notebooks = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert [module.__name__.rsplit(".", 1)[1] for module in solutions.NOTEBOOKS] == [p.stem[3:] for p in notebooks]
    for notebook, module in zip(notebooks, solutions.NOTEBOOKS, strict=True):
        assert {exercise.key.split(".")[0] for exercise in module.EXERCISES} == {notebook.name[:2]}, module.__name__
    shared = {path.stem for path in (HELPERS / "solutions").glob("*.py")} - {p.stem[3:] for p in notebooks}
    assert shared == {"__init__", "shapes", "terms"}

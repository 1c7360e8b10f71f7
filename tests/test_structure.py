"""helpers' imports flow one way: no module imports, directly or through others, one that imports it.

Read from the source with ast (importing would hide an order problem behind Python's module cache):
every `import helpers.x` / `from helpers[.x] import y` at any depth of a module is an edge. A cycle
means one of its modules is half-initialised while the other runs; a dynamic import (importlib,
pkgutil, __import__) hides an edge from readers and from this test, so there is none.
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
    old = {"exercises": {"solutions"}, "solutions": {"s01"}, "s01": {"exercises", "bugs"}, "bugs": set()}
    assert cycles(old) == ["exercises -> solutions -> s01 -> exercises"]
    assert cycles({**old, "s01": {"bugs"}}) == []


@pytest.mark.parametrize("word", ["importlib", "pkgutil", "__import__", "import_module"])
def test_no_dynamic_import(word):
    """Every import is written out, where a reader (and test_the_helpers_imports_have_no_cycle) sees it."""
    users = [name for name, path in MODULES.items() if word in path.read_text()]
    assert not users, f"{', '.join(users)} use {word}"


def test_the_graph_is_read_at_all():
    """The reader finds known edges, so an empty graph cannot pass for an acyclic one."""
    assert {"helpers.solutions", "helpers.exercise_types", "helpers.checks"} <= imported("helpers.exercises")
    assert "helpers.exercise_types" in imported("helpers.solutions.s01")
    assert "helpers.solutions.s13" in imported("helpers.solutions")

"""Mutation testing of helpers: plant one small bug at a time and see whether the tests notice.

For each module named (default: diagnosis, packing, checks, exercises, sandbox), every place where
one of these mutations applies is a mutant:

- a comparison turned around (== and !=, < and >=, > and <=, in and not in, is and is not);
- `and` and `or` swapped; a `not` removed;
- a number changed (a whole number plus one; a float 1000 times larger: a tolerance loosened);
- True and False swapped;
- a keyword argument of a call dropped (batch_first=..., strict=...);
- a returned value replaced by None.

A seeded sample of at most --most mutants per module (all of them when there are fewer) is run: the
module's copy with the mutant goes first on PYTHONPATH, and its own test file runs (pytest -x). The
mutant is killed when a test fails or the run exceeds --timeout seconds. Strings are never changed,
so wording alone never counts. Prints the score per module and every survivor, and writes them
to build/mutation/report.txt.

    python tools/mutation.py [--modules diagnosis packing] [--most 60] [--seed 0]
"""

import argparse
import ast
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("diagnosis", "packing", "checks", "exercises", "sandbox")
SWAPPED = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def mutations(tree):
    """(node index in ast.walk order, kind, what changes) for every mutation that applies in `tree`."""
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                if type(op) in SWAPPED:
                    found.append((index, ("compare", position), f"{type(op).__name__} -> {SWAPPED[type(op)].__name__}"))
        elif isinstance(node, ast.BoolOp):
            found.append((index, ("boolop", None), "and <-> or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.append((index, ("not", None), "not removed"))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            found.append((index, ("constant", None), f"{node.value!r} changed"))
        elif isinstance(node, ast.Call) and node.keywords:
            for position, keyword in enumerate(node.keywords):
                if keyword.arg is not None:
                    found.append((index, ("keyword", position), f"{keyword.arg}= dropped"))
        elif isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
            found.append((index, ("return", None), "returns None"))
    return found


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


def mutate(tree, index, kind):
    """A copy of `tree` with mutation `kind` made at the node with walk index `index`."""
    tree = copy.deepcopy(tree)
    node = list(ast.walk(tree))[index]
    what, position = kind
    if what == "compare":
        node.ops[position] = SWAPPED[type(node.ops[position])]()
    elif what == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif what == "not":
        _replace(tree, node, node.operand)
    elif what == "constant":
        value = node.value
        node.value = (not value) if isinstance(value, bool) else (value + 1 if isinstance(value, int) else value * 1000)
    elif what == "keyword":
        del node.keywords[position]
    elif what == "return":
        node.value = ast.Constant(None)
    return ast.fix_missing_locations(tree)


def _replace(tree, old, new):
    """Put `new` where `old` stands in `tree`."""
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[[i for i, v in enumerate(value) if v is old][0]] = new
                return


def _in_docstring_or_annotation(tree):
    """Walk indices of nodes that only document: docstrings, annotations (never mutated)."""
    skip = set()
    nodes = list(ast.walk(tree))
    ids = {id(n): i for i, n in enumerate(nodes)}
    for node in nodes:
        for field in ("annotation", "returns"):
            sub = getattr(node, field, None)
            if sub is not None:
                skip.update(ids[id(n)] for n in ast.walk(sub))
    return skip


def _passes(source, name, test_path, folder, timeout):
    """True when the module's tests pass with helpers/<name>.py replaced by `source` (False past the timeout)."""
    shutil.copytree(ROOT / "helpers", folder / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "helpers" / f"{name}.py").write_text(source)
    command = [sys.executable, "-P", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", str(test_path)]
    # -P: the working folder (the repository, with the real helpers/) is not put first on sys.path;
    # PYTHONPATH puts the copy before the editable install
    environment = dict(os.environ, PYTHONPATH=str(folder))
    try:
        result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, timeout=timeout)
        return result.returncode == 0
    except subprocess.TimeoutExpired:
        return False
    finally:
        shutil.rmtree(folder)


def run_module(name, most, seed, timeout, work):
    """(killed, survivors, total) for helpers/<name>.py."""
    source_path = ROOT / "helpers" / f"{name}.py"
    test_path = ROOT / "tests" / f"test_{name}.py"
    tree = ast.parse(source_path.read_text())
    skip = _in_docstring_or_annotation(tree)
    candidates = [m for m in mutations(tree) if m[0] not in skip]
    chosen = sorted(random.Random(seed).sample(candidates, min(most, len(candidates))))
    if not _passes(ast.unparse(tree), name, test_path, work / f"{name}-0", timeout):
        raise SystemExit(f"tests/test_{name}.py fails without a mutant: fix that first")
    killed, survivors = 0, []
    for number, (index, kind, what) in enumerate(chosen, 1):
        mutant = mutate(tree, index, kind)
        node = list(ast.walk(mutant))[index]
        line = getattr(node, "lineno", "?")
        dead = not _passes(ast.unparse(mutant), name, test_path, work / f"{name}-{number}", timeout)
        killed += dead
        if not dead:
            survivors.append(f"{name}.py line {line}: {what}")
        print(f"  {name} {number}/{len(chosen)} line {line} {what}: {'killed' if dead else 'SURVIVED'}", flush=True)
    return killed, survivors, len(chosen)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=list(MODULES))
    parser.add_argument("--most", type=int, default=60, help="mutants per module at most (a seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds before a mutant's test run counts as killed"
    )
    options = parser.parse_args()
    report, start = [], time.monotonic()
    with tempfile.TemporaryDirectory() as work:
        for name in options.modules:
            killed, survivors, total = run_module(name, options.most, options.seed, options.timeout, Path(work))
            report.append(f"{name}.py: {killed} of {total} mutants killed ({100 * killed / max(total, 1):.0f}%)")
            report += [f"  survived: {s}" for s in survivors]
    report.append(f"in {time.monotonic() - start:.0f} s")
    out = ROOT / "build" / "mutation"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()

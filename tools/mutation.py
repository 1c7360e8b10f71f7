"""Mutation testing of helpers: plant one small bug at a time and see whether the tests notice.

For each module named (default: diagnosis, packing, checks, exercises, sandbox), every place where
one of these mutations applies is a mutant:

- a comparison turned around (== and !=, < and >=, > and <=, in and not in, is and is not);
- `and` and `or` swapped; a `not` removed;
- a number changed (a whole number plus one; a float 1000 times larger, a tolerance loosened, or 0.0 made 1.0);
- True and False swapped;
- a keyword argument of a call dropped (batch_first=..., strict=...);
- a returned value replaced by None.

Strings are never changed, so wording alone never counts.

First the whole test suite (tests/) runs once under coverage.py, with one context per test, on a
snapshot of helpers/: that maps each line of the modules to the tests that execute it, and records
how long each test takes and which fail without a mutant (those are never used). The map is kept in
build/mutation/coverage-map.json and reused while helpers/, tests/, pyproject.toml and
requirements.txt are unchanged (--fresh-map rebuilds it).

Then each mutant runs, in a copy of helpers/ with the mutant in place (first on PYTHONPATH, as
`python -P -m pytest -x` would see it), only the tests that execute its line, from every test file,
fastest first, stopping at the first failure. A mutant in a function's header (a default, a
decorator) runs the tests that execute the function's body; one in a statement that only runs at
import (a module's constant) runs every test that executes the module. A mutant is killed when a test
fails (or a test file no longer imports) or when the run exceeds its time limit (--timeout seconds
plus three times what its tests took in the coverage run); a mutant whose line no test executes
survives without a run. To save starting Python and torch for each mutant, a server process
imports the third-party packages once and forks a child per mutant. At the end, every test that
killed a mutant is run again without a mutant: one that fails then is flaky, and its kills are
tried again without it.

All mutants of a module run, or a seeded random sample of --most of them (--seed); the report
says which ("sample of N of M"). A few mutants cannot change what the code does (equivalent
mutants): EQUIVALENT lists them, each with its reason. The score is reported both counting
every mutant and leaving those out; the exit status is 1 when a module scores under --minimum
percent with them left out. Prints the score per module and every survivor, and writes them to
build/mutation/report.txt (every mutant's fate, and the test that killed it: mutants.txt).

    python tools/mutation.py [--modules diagnosis packing] [--most 60] [--seed 0] [--minimum 90]
"""

import argparse
import ast
import copy
import gc
import hashlib
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP_VERSION = 2  # raise it when the coverage run changes what it records: maps kept from before are rebuilt
OUT = ROOT / "build" / "mutation"
MODULES = ("diagnosis", "packing", "checks", "exercises", "sandbox")
STAGE = 5.0  # seconds of tests (as the coverage run timed them) in a mutant's first run
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

# Equivalent mutants: (module, where: its functions and classes, the mutated line as written, stripped,
# the mutations) -> why no test can kill them: no input, on any machine, makes the mutant behave
# differently. The line's text, not its number, names it, so an entry stops applying when the code
# changes; one that matches no surviving mutant is reported. Keep it short: a mutant that is merely hard
# to kill belongs in the report as a survivor.
_NEVER_CHANGED = (
    "frozen only forbids assigning to a field; no code assigns to one of these, hashes one or uses one as a key"
)
_ALWAYS_SET = (
    "read only for an output departure at a time step, and _first_wrong_entry, which makes every such departure, "
    "always sets it"
)
_STRICT = ("strict= dropped", "True changed")  # zip(..., strict=True) made zip(...) or zip(..., strict=False)
_SAME_LENGTH = "strict only matters for iterables of different lengths, and {} just before: they never differ"
EQUIVALENT = {
    ("diagnosis", "Probe", "@dataclass(frozen=True)", ("frozen= dropped",)): _NEVER_CHANGED,
    ("diagnosis", "Departure", "@dataclass(frozen=True)", ("frozen= dropped",)): _NEVER_CHANGED,
    (
        "diagnosis",
        "Departure",
        "first_step: bool = False  # the first step its direction computes",
        ("False changed",),
    ): _ALWAYS_SET,
    ("diagnosis", "Departure", "last_step: bool = False  # the last step its direction computes", ("False changed",)): (
        _ALWAYS_SET
    ),
    ("diagnosis", "_same_value", "return False", ("returns None",)): (
        "None is as false as False, and every caller (same_outcome, _rearranged, helpers.exercises) only tests "
        "the result's truth"
    ),
    ("diagnosis", "same_outcome", "if a.error is not None or b.error is not None:", ("and <-> or",)): (
        "the two differ only when exactly one outcome has an error; an outcome with an error has no value (None), "
        "and _same_value(None, anything) is False, which the `or` branch returns too"
    ),
    (
        "diagnosis",
        "_larger",
        "x = torch.randn(T, B, module.input_size, generator=generator, dtype=dtype)  # (seq_len, batch, input_size)",
        ("generator= dropped",),
    ): (
        "the line just before seeds the global generator (torch.manual_seed(1000 + seed), inside diagnose's "
        "fork_rng), so without its own generator the input is drawn from a generator seeded the same way every "
        "time: the probe stays as reproducible and as random as before"
    ),
    ("diagnosis", "_larger", 'if module.mode == "LSTM" and module.proj_size:', ("and <-> or",)): (
        "with `or`, an nn.LSTM without projections gets proj_size=min(0, H - 1) = 0, nn.LSTM's default, and "
        "nn.RNN and nn.GRU have proj_size 0, so the condition stays false for them"
    ),
    (
        "diagnosis",
        "_gradient_problem",
        "theirs_grads = torch.autograd.grad(_stand_in_loss(theirs), theirs_params, allow_unused=True)",
        ("allow_unused= dropped",),
    ): (
        "torch's own layer uses every one of its parameters, its input, h_0 and c_0 in its result, so "
        "autograd.grad never meets an unused leaf on torch's side (the student's side keeps allow_unused)"
    ),
    ("exercises", "_step_departure", 'return "the values differ"', ("returns None",)): (
        "not reached: _step_departure runs only on a result found different (same_outcome, or a sealed outcome's "
        "agrees), and such a result always has a part of the wrong form or a first departure, found with the same "
        "tolerance, before this fallback"
    ),
    (
        "exercises",
        "_picked",
        "start, stop, step = part.start or 0, part.stop, part.step or 1",
        ("0 changed", "1 changed"),
    ): (
        "below, start and step are only compared with 0 and start sets the dimension's length, max(start, stop) + 1: "
        "a missing (or 0) start read as 1 changes that length only when stop is 0, where the slice picks nothing "
        "either way; a missing step read as 2 is as positive as 1"
    ),
    ("exercises", "_picked", "size = max(start, stop) + 1", ("1 changed",)): (
        "with both ends given and not negative, the positions a slice picks are the same from any dimension longer "
        "than both ends: max + 1 and max + 2 alike"
    ),
    ("exercises", "_Open.shift", "shifts = {g - e for g, e in zip(given, self.value, strict=True)}", _STRICT): (
        _SAME_LENGTH.format("_list_hint checks that the answer has as many entries as the reference")
    ),
    (
        "exercises",
        "_Open.wrong_entries",
        "return [index for index, (g, e) in enumerate(zip(given, self.value, strict=True)) if g != e]",
        _STRICT,
    ): _SAME_LENGTH.format("_list_hint checks that the answer has as many entries as the reference"),
    (
        "exercises",
        "_from_start",
        "if len(sizes) == len(value) and any(-s <= v < 0 for v, s in zip(value, sizes, strict=True)):",
        _STRICT,
    ): _SAME_LENGTH.format("the condition checks the lengths"),
    (
        "exercises",
        "_from_start",
        "return type(value)(_from_start(v, s) for v, s in zip(value, sizes, strict=True))",
        _STRICT,
    ): _SAME_LENGTH.format("the condition checks the lengths"),
    (
        "exercises",
        "_same",
        "return all(_same(g, r, exercise) for g, r in zip(given, reference.parts(), strict=True))",
        _STRICT,
    ): _SAME_LENGTH.format("_form_problem checks that a several-part answer has as many parts as the reference"),
    (
        "exercises",
        "_list_hint",
        "for index, (value, length) in enumerate(zip(given, _sizes(size, len(given)), strict=True)):",
        _STRICT,
    ): (
        "strict only matters for iterables of different lengths; the answer has as many entries as the reference "
        "(checked just before), and an index exercise gives one size per entry, or one for all"
    ),
    ("exercises", "_parts_hint", "pairs = enumerate(zip(given, reference.parts(), strict=True), start=1)", _STRICT): (
        _SAME_LENGTH.format("_form_problem checks that a several-part answer has as many parts as the reference")
    ),
}


# The mutants.


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
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, int):
            node.value = value + 1
        else:  # a tolerance loosened; a zero made one, since 1000 times zero is no change at all
            node.value = value * 1000 if value else 1.0
    elif what == "keyword":
        del node.keywords[position]
    elif what == "return":
        node.value = ast.Constant(None)
    return ast.fix_missing_locations(tree)


def _replace(tree, old, new):
    """Put `new` where `old` stands in `tree`."""
    for parent in ast.walk(tree):
        for field_name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field_name, new)
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
        for field_name in ("annotation", "returns"):
            sub = getattr(node, field_name, None)
            if sub is not None:
                skip.update(ids[id(n)] for n in ast.walk(sub))
    return skip


@dataclass
class Mutant:
    module: str
    index: int  # the mutated node's index in ast.walk order
    kind: tuple
    what: str  # the mutation, in words
    line: int
    text: str  # the mutated line, stripped
    function: str  # where it is: the enclosing functions and classes, or "module"
    lines: set = field(default_factory=set)  # the lines whose tests it runs
    at_import: bool = False  # a statement that only runs at import: every test of the module
    fate: str = ""  # "killed", "survived", "equivalent"
    detail: str = ""  # the test that killed it, or why it survived

    def name(self):
        return f"{self.module}.py line {self.line} ({self.function}): `{self.text}`: {self.what}"


def _mutants(name, source):
    """Every mutant of helpers/<name>.py (with `source`), with the lines whose tests it must run."""
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    source_lines = source.splitlines()
    skip = _in_docstring_or_annotation(tree)
    found = []
    for index, kind, what in mutations(tree):
        if index in skip:
            continue
        node = nodes[index]
        chain, child = [], node
        while id(child) in parents:
            chain.append((parents[id(child)], child))
            child = parents[id(child)]
        statement = node if isinstance(node, ast.stmt) else next(p for p, _ in chain if isinstance(p, ast.stmt))
        lines = set(range(node.lineno, node.end_lineno + 1)) | {statement.lineno}
        header = next(
            (p for p, c in chain if isinstance(p, ast.FunctionDef | ast.AsyncFunctionDef) and c not in p.body), None
        )
        if header is not None:  # a default or a decorator: evaluated at import, used by the function's body
            lines = set(range(header.body[0].lineno, header.body[-1].end_lineno + 1))
        scopes = [p.name for p, _ in reversed(chain) if isinstance(p, ast.FunctionDef | ast.ClassDef)]
        at_import = not any(isinstance(p, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) for p, _ in chain)
        found.append(
            Mutant(
                name,
                index,
                kind,
                what,
                node.lineno,
                source_lines[node.lineno - 1].strip(),
                ".".join(scopes) or "module",
                lines,
                at_import and header is None,
            )
        )
    return tree, found


# The server: third-party packages imported once; a child forked for each run of pytest.


class Server:
    """A process with `folder` first on PYTHONPATH that runs pytest in a fresh forked child per request."""

    def __init__(self, folder):
        command = [sys.executable, "-P", str(Path(__file__).resolve()), "--serve"]
        environment = dict(os.environ, PYTHONPATH=str(folder))
        self.folder = folder
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit("the mutation server did not start")

    def run(self, files, **request):
        """Run pytest on `files` in a child; return (its answer, what it recorded).

        request: only (node ids to run, in that order, stopping at the first failure unless exitfirst
        is False), skip (node ids left out), coverage (the module paths to measure, one context per test), module (the helpers
        module whose file to report), timeout (seconds for the whole run), stall (seconds for one test).
        The answer: code (pytest's exit status; None when stopped), seconds, stalled (the test that ran
        past `stall`). The record: failed (the first failure), failures, ran, module, seconds, lines.
        """
        record, progress = self.folder / "record.json", self.folder / "progress.txt"
        record.unlink(missing_ok=True)
        request = dict(request, files=files, record=str(record), progress=str(progress))
        self.process.stdin.write(json.dumps(request) + "\n")
        answer = json.loads(self.process.stdout.readline())
        try:
            found = json.loads(record.read_text())
        except (OSError, ValueError):
            found = {}
        return answer, found

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a run still going: the server stops it
            self.process.terminate()
            self.process.wait()


def _serve():
    """The server's loop: read a request per line, fork a child that runs pytest, answer how it ended."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1)  # the answers; whatever else prints goes to stderr
    os.dup2(2, 1)
    _preimport()
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    print("ready", file=protocol)
    try:
        _answer_requests(protocol)
    finally:
        _stop_child()


_running = []  # the child now running, if any


def _stop_child():
    for pid in _running:
        try:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    _running.clear()


def _answer_requests(protocol):
    for request_line in sys.stdin:
        request = json.loads(request_line)
        progress = Path(request["progress"])
        progress.write_text("")
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.setsid()  # its own process group: stopping it stops whatever it started
            os._exit(_child(request))
        _running.append(pid)
        code, stalled, timeout, stall = None, None, request.get("timeout"), request.get("stall")
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                _running.clear()
                break
            now = time.monotonic()
            if stall and time.time() - progress.stat().st_mtime > stall:
                stalled = progress.read_text().strip() or None
            if stalled or (timeout and now - start > timeout):
                _stop_child()
                break
            select.select([], [], [], 0.02 if now - start < 2 else 0.2)
        answer = {"code": code, "seconds": time.monotonic() - start, "stalled": stalled}
        print(json.dumps(answer), file=protocol)


def _preimport():
    """Import what helpers and the tests import from outside the repository, so that no child imports it again."""
    import importlib

    names = {"coverage"}
    for path in [*(ROOT / "helpers").rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    local = {p.stem for p in ROOT.glob("*/*.py")} | {p.name for p in ROOT.iterdir()}
    for name in sorted(names):
        if name.split(".")[0] in local | {"helpers", "conftest"}:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # an optional package: a test that needs it imports (or skips) it itself
            continue
    from importlib.metadata import entry_points

    import pytest  # noqa: F401  and its plugins
    from _pytest.config import default_plugins

    plugins = [f"_pytest.{name}" for name in default_plugins] + [
        p.value.split(":")[0] for p in entry_points(group="pytest11")
    ]
    for plugin in plugins:
        try:
            importlib.import_module(plugin)
        except Exception:
            continue
    if any(m == "helpers" or m.startswith("helpers.") for m in sys.modules):
        raise SystemExit("the server imported helpers before any mutant: it would test the wrong code")
    gc.collect()
    gc.freeze()  # what is imported stays: no child's garbage collection walks (and so copies) it


def _child(request):
    """In the forked child: run pytest as the request says, and write down what happened."""
    sys.dont_write_bytecode = True  # the mutated module changes at every call: never cache it
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    record = {"failed": None, "failures": [], "ran": 0, "module": None, "seconds": {}, "lines": {}, "collect": 0.0}
    cov = None
    if request.get("coverage"):
        import coverage

        cov = coverage.Coverage(data_file=None, include=request["coverage"], config_file=False)
        cov.start()
    try:
        import helpers  # noqa: F401  (a mutant that breaks the import would stop pytest at conftest.py)
    except Exception as error:
        record["failed"] = f"helpers does not import: {type(error).__name__}: {error}"
        Path(request["record"]).write_text(json.dumps(record))
        return 1
    import pytest

    only = request.get("only")
    wanted = {nodeid: rank for rank, nodeid in enumerate(only or [])}
    skip = set(request.get("skip") or [])
    progress = Path(request["progress"])

    class Plugin:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, config, items):
            if only is None:
                chosen = [i for i in items if i.nodeid not in skip]
            else:
                chosen = sorted((i for i in items if i.nodeid in wanted), key=lambda i: wanted[i.nodeid])
            config.hook.pytest_deselected(items=[i for i in items if i not in chosen])
            items[:] = chosen
            record["ran"] = len(chosen)

        def pytest_collection_finish(self, session):
            record["collect"] = time.monotonic() - began

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            progress.write_text(item.nodeid)
            if cov is not None:
                cov.switch_context(item.nodeid)

        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logfinish(self, nodeid, location):
            if cov is not None:
                cov.switch_context("")

        def pytest_runtest_logreport(self, report):
            record["seconds"][report.nodeid] = record["seconds"].get(report.nodeid, 0.0) + report.duration
            if report.failed:
                record["failed"] = record["failed"] or report.nodeid
                record["failures"].append(report.nodeid)

        def pytest_collectreport(self, report):
            if report.failed:
                record["failed"] = record["failed"] or f"{report.nodeid} (does not import)"

    _hypothesis_profile()
    arguments = ["-q", "-p", "no:cacheprovider", *request["files"]]
    exitfirst = request.get("exitfirst", only is not None)
    began = time.monotonic()
    code = pytest.main((["-x"] if exitfirst else []) + arguments, plugins=[Plugin()])
    if cov is not None:
        cov.stop()
        data = cov.get_data()
        for path in data.measured_files():
            record["lines"][path] = {str(line): contexts for line, contexts in data.contexts_by_lineno(path).items()}
    module = sys.modules.get(f"helpers.{request.get('module')}")
    record["module"] = getattr(module, "__file__", None)
    Path(request["record"]).write_text(json.dumps(record))
    return int(code)


def _hypothesis_profile():
    """Property tests: the same examples on every run, and no example database written from a mutant's failures."""
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("mutation", database=None, derandomize=True)
    settings.load_profile("mutation")


# The coverage map: which tests execute which lines.


def _test_files(tests):
    """The test files named, a folder standing for its test_*.py files (not those in folders below it)."""
    files = []
    for name in tests:
        path = (ROOT / name).resolve()
        files += sorted(path.glob("test_*.py")) if path.is_dir() else [path]
    return [str(f.relative_to(ROOT)) for f in files]


def _key(test_file):
    """A hash of what a test file's part of the map depends on: helpers, the file, its conftest, the settings."""
    digest = hashlib.sha256(f"map version {MAP_VERSION}\0{test_file}\0".encode())
    paths = sorted(p for p in (ROOT / "helpers").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    paths += [ROOT / test_file, ROOT / "pyproject.toml", ROOT / "requirements.txt"]
    paths += [folder / "conftest.py" for folder in (ROOT / test_file).parents if folder.is_relative_to(ROOT)]
    for path in paths:
        if path.exists():
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _coverage_map(server, folder, tests, options):
    """Which tests execute which lines: {"lines": {module: {line: {node ids}}}, "seconds": {...}, "failed": {...}}.

    Each test file runs under coverage in its own child; its part is kept in build/mutation/coverage/
    and used again while helpers/, the file, its conftest.py and the settings are unchanged. A test that
    runs past --stall seconds is stopped, left out of the map, and its file run again without it.
    """
    store = OUT / "coverage"
    store.mkdir(parents=True, exist_ok=True)
    paths = {os.path.realpath(folder / "helpers" / f"{name}.py"): name for name in MODULES}
    merged = {
        "lines": {name: {} for name in MODULES},
        "seconds": {},
        "failed": set(),
        "stalled": set(),
        "broken": set(),
        "collect": {},
    }
    fresh = 0
    for test_file in _test_files(tests):
        key = _key(test_file)
        kept = store / (test_file.replace("/", "__") + ".json")
        part = json.loads(kept.read_text()) if kept.exists() and not options.fresh_map else {}
        if part.get("key") != key:
            start, stalled = time.monotonic(), []
            while True:
                answer, found = server.run(
                    [test_file], skip=stalled, coverage=sorted(paths), module=None, stall=options.stall
                )
                if not answer["stalled"]:
                    break
                stalled.append(answer["stalled"])
            if answer["code"] not in (0, 1, 5) or "lines" not in found:
                print(
                    f"coverage map: {test_file} did not run (pytest exit status {answer['code']}): left out", flush=True
                )
                merged["broken"].add(test_file)
                continue
            lines = {paths[os.path.realpath(p)]: by_line for p, by_line in found["lines"].items()}
            part = {"key": key, "lines": lines, "seconds": found["seconds"], "failed": found["failures"]}
            part["collect"] = found["collect"]
            part["stalled"] = stalled
            kept.write_text(json.dumps(part))
            fresh += 1
            took = time.monotonic() - start
            print(f"coverage map: {test_file}: {len(part['seconds'])} tests in {took:.0f} s", flush=True)
        for name, by_line in part["lines"].items():
            for line, contexts in by_line.items():
                merged["lines"][name].setdefault(int(line), set()).update(contexts)
        merged["seconds"].update(part["seconds"])
        merged["collect"][test_file] = part["collect"]
        merged["failed"].update(part["failed"])
        merged["stalled"].update(part["stalled"])
    if not fresh:
        print(f"coverage map: kept in {store.relative_to(ROOT)} (helpers and tests unchanged)", flush=True)
    return merged


# Running the mutants.


def _tests_for(mutant, coverage, unused):
    """The node ids of the tests that execute the mutant's lines, fastest first (counting its file's collection)."""
    by_line = coverage["lines"][mutant.module]
    found = set()
    for line in mutant.lines:
        found.update(by_line.get(line, ()))
    if "" in found and mutant.at_import:  # it runs at import: whatever executes the module may notice
        found = {nodeid for contexts in by_line.values() for nodeid in contexts}
    found = {nodeid for nodeid in found if nodeid and nodeid not in unused}
    return sorted(found, key=lambda nodeid: (_cost(nodeid, coverage), nodeid))


def _cost(nodeid, coverage):
    """Seconds a test took in the coverage run, plus the time its file took to collect."""
    return coverage["seconds"].get(nodeid, 0.0) + coverage["collect"].get(nodeid.split("::")[0], 0.0)


def _place(folder, name, source):
    """Put `source` in the copy of helpers as helpers/<name>.py, with no stale bytecode left of it."""
    (folder / "helpers" / f"{name}.py").write_text(source)
    for stale in (folder / "helpers" / "__pycache__").glob(f"{name}.*.pyc"):
        stale.unlink()


def _stages(tests, coverage):
    """The tests in two runs: the first few (about STAGE seconds of them), then the rest if those all pass.

    Most mutants fail one of the first tests, and a small first run spares collecting the files that
    only later tests need.
    """
    spent, count = 0.0, 0
    while count < len(tests) and spent <= STAGE:
        spent += coverage["seconds"].get(tests[count], 0.0)
        count += 1
    return [tests[:count], tests[count:]] if tests[count:] else [tests]


def _run(mutant, tests, tree, server, folder, options, coverage):
    """Run one mutant's tests with the mutant in place: set its fate and detail; return the seconds taken."""
    _place(folder, mutant.module, ast.unparse(mutate(tree, mutant.index, mutant.kind)))
    target, took, ran = str(folder / "helpers" / f"{mutant.module}.py"), 0.0, 0
    for stage in _stages(tests, coverage):
        limit = options.timeout + 3 * sum(coverage["seconds"].get(t, 0.0) for t in stage)
        files = sorted({t.split("::")[0] for t in stage})
        answer, found = server.run(files, only=stage, module=mutant.module, timeout=limit)
        code, took, ran = answer["code"], took + answer["seconds"], ran + found.get("ran", 0)
        if code is not None and found.get("module") not in (None, target):
            raise SystemExit(f"the tests imported {found.get('module')}, not the mutant {target}: nothing was tested")
        if code is None:
            mutant.fate, mutant.detail = "killed", f"past its time limit of {limit:.0f} s"
        elif code in (1, 2, 3):  # a test failed, a test file no longer imports, or pytest itself broke
            mutant.fate, mutant.detail = "killed", found.get("failed") or f"pytest exit status {code}"
        elif code == 0:
            mutant.fate, mutant.detail = "survived", f"{ran} tests ran, all passed"
            continue
        else:
            raise SystemExit(f"pytest exit status {code} for {mutant.name()}: its tests were not found")
        break
    return took


def _equivalent(mutant):
    """Why the mutant is equivalent, if EQUIVALENT lists it; else None."""
    for (module, where, text, whats), reason in EQUIVALENT.items():
        if (module, where, text) == (mutant.module, mutant.function, mutant.text) and mutant.what in whats:
            return reason
    return None


def _settle(mutant):
    """A listed equivalent mutant that survived is marked so (one that was killed is not equivalent)."""
    reason = _equivalent(mutant)
    if reason and mutant.fate == "survived":
        mutant.fate, mutant.detail = "equivalent", reason


def _flaky(mutants, server, coverage):
    """The tests that killed a mutant and fail without one too (the copy of helpers holds no mutant now)."""
    tests = sorted({m.detail for m in mutants if m.fate == "killed" and "::" in m.detail and " " not in m.detail})
    if not tests:
        return set()
    files = sorted({t.split("::")[0] for t in tests})
    answer, found = server.run(files, only=tests, exitfirst=False, module=None)
    return set(found.get("failures", [])) & set(tests)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", default=list(MODULES), choices=MODULES)
    parser.add_argument("--most", type=int, default=None, help="at most this many mutants per module, a seeded sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout", type=float, default=60, help="seconds a mutant's tests may take beyond 3 times their usual time"
    )
    parser.add_argument("--minimum", type=float, default=90, help="the lowest score (percent) that passes")
    parser.add_argument("--tests", nargs="+", default=["tests"], help="the test files (or folders) to map and use")
    parser.add_argument("--fresh-map", action="store_true", help="map every test file again, even if unchanged")
    parser.add_argument("--stall", type=float, default=600, help="seconds one test may run under coverage")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        return _serve()
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))  # so that the copies are removed
    start = time.monotonic()
    OUT.mkdir(parents=True, exist_ok=True)
    report, details, results = [], [], []
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        # one copy of helpers for the whole run (others may edit helpers/ meanwhile); the mutant goes in there
        shutil.copytree(ROOT / "helpers", folder / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
        baseline = {name: (folder / "helpers" / f"{name}.py").read_text() for name in MODULES}
        server = Server(folder)
        try:
            coverage = _coverage_map(server, folder, options.tests, options)
            unused = coverage["failed"] | coverage["stalled"]
            if coverage["broken"]:
                report.append(f"not used (they could not be collected): {', '.join(sorted(coverage['broken']))}")
            if coverage["failed"]:
                report.append(f"not used (they fail without a mutant): {', '.join(sorted(coverage['failed']))}")
            if coverage["stalled"]:
                report.append(
                    f"not used (they ran past {options.stall:g} s under coverage): {', '.join(sorted(coverage['stalled']))}"
                )
            for name in options.modules:
                tree, mutants = _mutants(name, baseline[name])
                if options.most is not None and options.most < len(mutants):
                    chosen = random.Random(options.seed).sample(range(len(mutants)), options.most)
                    scope = f"a seeded sample (seed {options.seed}) of {options.most} of {len(mutants)} mutants"
                    mutants = [mutants[i] for i in sorted(chosen)]
                else:
                    scope = f"all {len(mutants)} mutants"
                for number, mutant in enumerate(mutants, 1):
                    tests = _tests_for(mutant, coverage, unused)
                    took = 0.0
                    if tests:
                        took = _run(mutant, tests, tree, server, folder, options, coverage)
                    else:
                        mutant.fate, mutant.detail = "survived", "no test executes this line"
                    _settle(mutant)
                    print(
                        f"  {name} {number}/{len(mutants)} line {mutant.line} {mutant.what}: {mutant.fate}"
                        f" ({mutant.detail}; {len(tests)} tests, {took:.1f} s)",
                        flush=True,
                    )
                _place(folder, name, baseline[name])
                results.append((name, scope, mutants, tree))
            everything = [m for _, _, mutants, _ in results for m in mutants]
            flaky = _flaky(everything, server, coverage)
            if flaky:
                report.append(
                    f"flaky (they fail without a mutant too; their kills were run again without them): {', '.join(sorted(flaky))}"
                )
                for name, _, mutants, tree in results:
                    for mutant in (m for m in mutants if m.fate == "killed" and m.detail in flaky):
                        tests = _tests_for(mutant, coverage, unused | flaky)
                        mutant.fate, mutant.detail = "survived", "only a flaky test failed"
                        if tests:
                            _run(mutant, tests, tree, server, folder, options, coverage)
                        _settle(mutant)
                    _place(folder, name, baseline[name])
        finally:
            server.close()
    below = []
    for name, scope, mutants, _ in results:
        total = len(mutants)
        killed = sum(m.fate == "killed" for m in mutants)
        equivalent = sum(m.fate == "equivalent" for m in mutants)
        score, net = 100 * killed / max(total, 1), 100 * killed / max(total - equivalent, 1)
        line = f"{name}.py: {scope}: {killed} of {total} killed ({score:.1f}%)"
        if equivalent:
            line += (
                f"; {killed} of {total - equivalent} ({net:.1f}%) leaving out {equivalent} equivalent (allow-listed)"
            )
        report.append(line)
        report += [f"  survived: {m.name()} [{m.detail}]" for m in mutants if m.fate == "survived"]
        report += [f"  equivalent: {m.name()} [{m.detail}]" for m in mutants if m.fate == "equivalent"]
        details += [f"{m.fate}: {m.name()} [{m.detail}]" for m in mutants]
        if net < options.minimum:
            below.append(name)
    equivalent = [m for _, _, mutants, _ in results for m in mutants if m.fate == "equivalent"]
    if options.most is None:
        used = {key for key in EQUIVALENT for m in equivalent if key[:3] == (m.module, m.function, m.text)}
        stale = [key for key in EQUIVALENT if key[0] in options.modules and key not in used]
        report += [f"allow-listed, but no surviving mutant is that one (remove it?): {key}" for key in stale]
    verdict = (
        f"{', '.join(below)} under {options.minimum:g}%" if below else f"every module at {options.minimum:g}% or more"
    )
    report.append(f"{verdict}; in {time.monotonic() - start:.0f} s")
    (OUT / "report.txt").write_text("\n".join(report) + "\n")
    (OUT / "mutants.txt").write_text("\n".join(details) + "\n")
    print("\n".join(report))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())

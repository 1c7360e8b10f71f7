"""How well the checks name a student's bug: every version in benchmarks/wrong_versions.py, checked (make bench-diagnosis).

Each version runs through its check -- `helpers.exercises.check_code(key, fn)` for an exercise,
`helpers.diagnose(fn, module, input, hx)` on a freshly built (module, input, hx) for a whole layer --
in a worker process, with what the check prints captured. Each version is classified:

- named: the check failed it, and its message matches one of the version's `names` regular
  expressions (case-insensitive): it says the cause, or the precise place (term, weight, step,
  direction, layer or row) of the true bug. The expressions are matched against the message less
  what describes the input rather than the bug, so that they cannot match by accident: the
  function's own name (wherever it appears), the student's code the message quotes ("at line 6, in
  fn: <code>"), the lines that describe a case or probe ("case: ...", "probe: ...", "your
  layer: ...") or list every probe's outcome ("checks: ... ✓ · ... ✗", the same list for every bug),
  and the "first departure: ..." line, which every failing message has: where the values first
  differ is not yet a diagnosis (a hint, "most likely", an error or a shape statement may be).
- misleading: failed, not named, and the message commits to a bug: it holds "most likely" (a
  "most likely: ..." line, "most likely one of them:" with its list, or a sentence "Most likely
  the ..."), and what it names matches none of the version's expressions.
- vague: failed, neither named nor misleading (where the first departure is, a hint, a "possibly:"
  guess). A vague message with a "possibly:" guess that matches none of the expressions is also
  listed, as a wrong guess.
- missed: the check passed a wrong version.
- crash: the check itself raised (it should never raise).
- hang: the check took more than HANG seconds of wall-clock time (the worker is then killed and
  a new one started).
- for a correct version: passed, or rejected when the check failed it.

Prints the counts by exercise and overall, each version's class and time, and every missed,
misleading, crash, hang and rejected version with its message; writes all of it, with every
version's message, to build/diagnosis-quality/report.txt (and the raw results to results.json
beside it: `--from-results` re-classifies them without running the checks again). Always exits 0:
it measures, it does not gate. Run from the repository root: .venv/bin/python
benchmarks/diagnosis_quality.py

`--set holdout` runs benchmarks/wrong_versions_holdout.py instead: a held-out set written
independently of the first set and of the checks, so its score is not a training score. It writes
build/diagnosis-quality/holdout-report.txt (and holdout-results.json); `--set holdout
--from-results` re-classifies those.

`--set fresh` runs benchmarks/wrong_versions_fresh.py: a third set, written after the checks had been
tuned on both others and without reading either, so its score measures the checks on bugs nobody
tuned them on. It writes build/diagnosis-quality/fresh-report.txt (and fresh-results.json).

`--set blind` runs benchmarks/wrong_versions_blind.py: a fourth set, written after the checks gained
their gate cases, shape and wiring slips (when the other three had all been looked at), blind to the
checker and its catalogue, and run once; its messages were then read to choose what to improve, so it
is a tuning set now. It writes build/diagnosis-quality/blind-report.txt.

`--set blind2` runs benchmarks/wrong_versions_blind2.py: a fifth set (135 wrong, 23 right), written
blind to the checker like the fourth (benchmarks/verify_blind2.py checks every version against torch
directly), and run once after the improvements the fourth set's reading led to; its messages were then
read too, so it is a tuning set now. It writes build/diagnosis-quality/blind2-report.txt.

`--set blind3` runs benchmarks/wrong_versions_blind3.py: a sixth set (126 wrong, 15 right), written
blind to the checker (benchmarks/verify_blind3.py checks it against torch), run once after the
improvements the fifth set's reading led to. It writes build/diagnosis-quality/blind3-report.txt.

`--set blind4` runs benchmarks/wrong_versions_blind4.py: a seventh set (163 wrong, 18 right), written
blind to the checker (benchmarks/verify_blind4.py checks it against torch), run once after the
improvements the sixth set's reading led to. It writes build/diagnosis-quality/blind4-report.txt.
"""

import contextlib
import importlib
import io
import json
import multiprocessing
import re
import statistics
import sys
import textwrap
import time
import traceback
from collections import Counter
from pathlib import Path

from wrong_versions import VERSIONS

HANG = 30.0  # seconds of wall-clock time for one version's check
REPORT = Path("build/diagnosis-quality/report.txt")
RESULTS = REPORT.with_name("results.json")  # what each check printed and returned, for --from-results
# --set NAME: the module of versions, and where its report and raw results go
SETS = {
    "wrong_versions": ("wrong_versions", REPORT, RESULTS),
    "holdout": (
        "wrong_versions_holdout",
        REPORT.with_name("holdout-report.txt"),
        REPORT.with_name("holdout-results.json"),
    ),
    "fresh": (
        "wrong_versions_fresh",
        REPORT.with_name("fresh-report.txt"),
        REPORT.with_name("fresh-results.json"),
    ),
    "blind": (
        "wrong_versions_blind",
        REPORT.with_name("blind-report.txt"),
        REPORT.with_name("blind-results.json"),
    ),
    "blind2": (
        "wrong_versions_blind2",
        REPORT.with_name("blind2-report.txt"),
        REPORT.with_name("blind2-results.json"),
    ),
    "blind3": (
        "wrong_versions_blind3",
        REPORT.with_name("blind3-report.txt"),
        REPORT.with_name("blind3-results.json"),
    ),
    "blind4": (
        "wrong_versions_blind4",
        REPORT.with_name("blind4-report.txt"),
        REPORT.with_name("blind4-results.json"),
    ),
}
WRONG_CLASSES = ["named", "vague", "misleading", "missed", "crash", "hang"]
CONFIDENT = re.compile(r"\bmost likely\b", re.IGNORECASE)
GUESS = re.compile(r"^\s*possibly:", re.IGNORECASE | re.MULTILINE)


def load_versions(set_name="wrong_versions"):
    """The versions of one set (a module beside this file: the script's folder is on the path)."""
    return VERSIONS if set_name == "wrong_versions" else importlib.import_module(SETS[set_name][0]).VERSIONS


def group(version):
    """The exercise key, or diagnose/RNN, diagnose/LSTM, diagnose/GRU."""
    return version.target if isinstance(version.target, str) else f"diagnose/{version.target.kind}"


def target_label(version):
    return version.target if isinstance(version.target, str) else f"diagnose {version.target.label}"


# --- the worker: runs one version's check at a time ------------------------------------------


def run_check(version):
    """(passed, message, error, seconds) for one version's check, what it prints captured."""
    import helpers
    from helpers.exercises import check_code

    printed = io.StringIO()
    start = time.perf_counter()
    passed, error = None, ""
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            if isinstance(version.target, str):
                verdict = check_code(version.target, version.fn)
            else:
                module, input, hx = version.target()  # a fresh copy: built anew for each check
                verdict = helpers.diagnose(version.fn, module, input, hx)
            passed = bool(verdict)
    except BaseException:  # noqa: BLE001 -- the check must never raise; record how it did
        error = traceback.format_exc()
    return {"passed": passed, "message": printed.getvalue(), "error": error, "seconds": time.perf_counter() - start}


def worker(connection, set_name="wrong_versions"):
    import helpers  # noqa: F401 -- imported once, before the first version's clock starts

    by_name = {v.name: v for v in load_versions(set_name)}
    connection.send("ready")
    while (name := connection.recv()) is not None:
        connection.send(run_check(by_name[name]))


class Worker:
    """A spawned process that checks versions one at a time; replaced when one hangs or kills it."""

    def __init__(self, set_name="wrong_versions"):
        context = multiprocessing.get_context("spawn")
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=worker, args=(theirs, set_name), daemon=True)
        self.process.start()
        self.connection.recv()  # "ready": helpers imported

    def check(self, version):
        start = time.perf_counter()
        self.connection.send(version.name)
        try:
            if self.connection.poll(HANG):
                return self.connection.recv(), False
        except EOFError:  # the worker died (a crash of the interpreter itself)
            seconds = time.perf_counter() - start
            return {"passed": None, "message": "", "error": "the worker process died", "seconds": seconds}, True
        return {"passed": None, "message": "", "error": "", "seconds": time.perf_counter() - start, "hang": True}, True

    def close(self):
        with contextlib.suppress(Exception):
            self.connection.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


# --- classification ------------------------------------------------------------------------


DESCRIBES_INPUT = re.compile(r"^\s*(case|probe|checks|your layer|first departure):.*$", re.IGNORECASE | re.MULTILINE)
QUOTED_CODE = re.compile(r"(at line \d+, in [\w<>.]+): .*?(?=\. A loop|$)", re.MULTILINE)


def judged_text(version, message):
    """The message less what describes the input or quotes the student (see the module's docstring)."""
    text = message.replace(version.name, "<fn>")
    text = QUOTED_CODE.sub(r"\1: <code>", text)
    return DESCRIBES_INPUT.sub("", text)


def naming_match(version, message):
    """'pattern' -> 'matched text' for the first of the version's expressions that the message matches, or None."""
    text = judged_text(version, message)
    for pattern in version.names:
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return f"{pattern!r} matched {found.group(0)!r}"
    return None


def classify(version, result):
    if result.get("hang"):
        return "hang"
    if result["error"]:
        return "crash"
    if version.correct:
        return "passed" if result["passed"] else "rejected"
    if result["passed"]:
        return "missed"
    if naming_match(version, result["message"]):
        return "named"
    if CONFIDENT.search(judged_text(version, result["message"])):
        return "misleading"
    return "vague"


def wrong_guess(version, result, verdict):
    """True when a vague message holds a 'possibly:' guess (which then names something else)."""
    return verdict == "vague" and bool(GUESS.search(result["message"]))


# --- the report ----------------------------------------------------------------------------


def percent(part, whole):
    return f"{part:4d} ({100 * part / whole:5.1f}%)" if whole else f"{part:4d}"


def table(rows):
    groups = sorted({group(v) for v, _, _ in rows}, key=lambda g: (g.startswith("diagnose"), g))
    header = (
        f"{'exercise':18} {'wrong':>5} "
        + " ".join(f"{c:>10}" for c in WRONG_CLASSES)
        + f" {'named %':>8} {'right':>6} {'rejected':>8}"
    )
    lines = [header, "-" * len(header)]
    for name in [*groups, "all"]:
        chosen = [(v, c) for v, _, c in rows if name == "all" or group(v) == name]
        wrong = Counter(c for v, c in chosen if not v.correct)
        right = [c for v, c in chosen if v.correct]
        total = sum(wrong.values())
        cells = " ".join(f"{wrong[c]:>10}" for c in WRONG_CLASSES)
        if name == "all":
            lines.append("-" * len(header))
        share = f"{100 * wrong['named'] / total:7.0f}%" if total else f"{'':8}"
        lines.append(f"{name:18} {total:>5} {cells} {share} {len(right):>6} {right.count('rejected'):>8}")
    return lines


def indented(text, width=110):
    out = []
    for line in text.rstrip().splitlines() or ["(printed nothing)"]:
        out += textwrap.wrap(line, width, initial_indent="    | ", subsequent_indent="    |   ") or ["    |"]
    return out


def describe(version, result, verdict):
    lines = [f"- {version.name} [{target_label(version)}] {verdict}, {result['seconds']:.2f} s"]
    lines.append(f"  true bug: {version.bug}" if not version.correct else f"  correct version: {version.bug}")
    if version.source:
        lines.append(f"  drawn from: {version.source}")
    if result["error"]:
        lines.append("  the check raised:")
        lines += indented(result["error"])
    if verdict == "named":
        lines.append(f"  named by: {naming_match(version, result['message'])}")
    if result["message"] or not result["error"]:
        lines.append("  message:")
        lines += indented(result["message"])
    return lines


def report(rows, wall, set_name="wrong_versions"):
    wrong = [(v, r, c) for v, r, c in rows if not v.correct]
    right = [(v, r, c) for v, r, c in rows if v.correct]
    counts = Counter(c for _, _, c in wrong)
    seconds = [r["seconds"] for _, r, _ in rows]
    title = "How well the checks name each bug (benchmarks/diagnosis_quality.py)"
    if set_name != "wrong_versions":
        title += f", set {set_name}: benchmarks/{SETS[set_name][0]}.py"
    lines = [title, ""]
    lines += table(rows)
    lines += ["", f"overall, of {len(wrong)} wrong versions:"]
    lines += [f"  {c:10} {percent(counts[c], len(wrong))}" for c in WRONG_CLASSES]
    rejected = sum(c == "rejected" for _, _, c in right)
    lines += [
        f"of {len(right)} correct versions: passed {percent(len(right) - rejected, len(right))}, "
        f"rejected {percent(rejected, len(right))}"
    ]
    lines += [
        "",
        f"time: {wall:.1f} s in all; per version {statistics.mean(seconds):.2f} s on average, median "
        f"{statistics.median(seconds):.2f} s, longest {max(seconds):.2f} s",
    ]
    lines += ["", "each version: class, seconds"]
    width = max(len(v.name) for v, _, _ in rows)
    lines += [f"  {v.name:{width}}  {c:10} {r['seconds']:6.2f} s  {target_label(v)}" for v, r, c in rows]
    for title, chosen in [
        ("missed (a wrong version passed)", [x for x in wrong if x[2] == "missed"]),
        ("misleading (names another bug)", [x for x in wrong if x[2] == "misleading"]),
        ("crash (the check raised)", [x for x in rows if x[2] == "crash"]),
        (f"hang (over {HANG:g} s)", [x for x in rows if x[2] == "hang"]),
        ("rejected (a correct version failed)", [x for x in right if x[2] == "rejected"]),
        ("vague, with a 'possibly:' guess that names something else", [x for x in wrong if wrong_guess(*x)]),
        (
            "vague (all of them: the message names neither the cause nor the place)",
            [x for x in wrong if x[2] == "vague"],
        ),
    ]:
        lines += ["", f"{title}: {len(chosen)}"]
        for version, result, verdict in chosen:
            lines += describe(version, result, verdict)
    return lines


def run_all(versions=None, set_name="wrong_versions"):
    """{name: result} for every version, each checked in the worker."""
    versions = load_versions(set_name) if versions is None else versions
    results, worker_ = {}, Worker(set_name)
    try:
        for number, version in enumerate(versions, 1):
            result, replace = worker_.check(version)
            results[version.name] = result
            verdict = classify(version, result)
            print(f"[{number:3}/{len(versions)}] {verdict:10} {result['seconds']:6.2f} s  {version.name}", flush=True)
            if replace:
                worker_.process.kill()
                worker_.process.join()
                worker_ = Worker(set_name)
    finally:
        worker_.close()
    return results


def chosen_set(argv):
    """The NAME of `--set NAME` (or `--set=NAME`); the first set when there is none."""
    for k, arg in enumerate(argv):
        if arg.startswith("--set="):
            name = arg.split("=", 1)[1]
        elif arg == "--set" and k + 1 < len(argv):
            name = argv[k + 1]
        else:
            continue
        if name not in SETS:
            raise SystemExit(f"--set: unknown set {name!r}; the sets are {', '.join(SETS)}")
        return name
    return "wrong_versions"


def main(argv):
    """Check every version (or, with --from-results, re-classify the results saved by the last run)."""
    start = time.perf_counter()
    set_name = chosen_set(argv)
    versions = load_versions(set_name)
    _, report_path, results_path = SETS[set_name]
    if "--from-results" in argv:
        saved = json.loads(results_path.read_text())
        results, wall = saved["results"], saved["wall"]
    else:
        results = run_all(versions, set_name)
        wall = time.perf_counter() - start
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps({"wall": wall, "results": results}, indent=1))
    rows = [(v, results[v.name], classify(v, results[v.name])) for v in versions]
    lines = report(rows, wall, set_name)
    print()
    print("\n".join(lines))
    everything = [*lines, "", "every version's message:"]
    for version, result, verdict in rows:
        everything += describe(version, result, verdict)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text("\n".join(everything) + "\n")
    print(f"\nthe full report, with every version's message: {report_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

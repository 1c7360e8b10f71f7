"""An optional, local log of a student's exercise attempts, and the results file it exports.

Nothing is recorded until a student turns the log on, and nothing is ever sent anywhere:

    helpers.attempts.start("ada")          # from now on, each check() and check_code() is logged
    helpers.attempts.export()              # writes rnns-results-ada.json beside the notebook: hand it in

The log is one line of JSON per attempt in rnns-attempts-<who>.jsonl, in the folder the notebook runs
in (the notebook's own folder in Jupyter), so it survives a restarted kernel: `start` with the same
name appends to it. A line holds the time, the exercise's key and whether the answer was right; never
the answer itself. `export` sums it up per exercise (attempts, right or not, when first right) into
a file an instructor can collect; `stop()` turns the log off. Grading itself re-runs the notebook
with the autograder (tools/release.py): the log is a record of practice, not a grade.
"""

import json
import re
import time
from pathlib import Path

_log = None  # the file attempts go to while the log is on


def start(who, folder="."):
    """Log every exercise check from now on to rnns-attempts-<who>.jsonl in `folder`; return its path."""
    global _log
    if not isinstance(who, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", who):
        raise ValueError(
            f"start(who) takes a short name or student id of letters, digits, '.', '_' or '-', e.g. 'ada'; got {who!r}"
        )
    _log = (Path(folder) / f"rnns-attempts-{who}.jsonl").resolve()  # where the notebook ran, whatever it cd's to
    _log.touch()
    print(f"Logging your exercise attempts to {_log.name} (on this computer only). export() writes the results file.")
    return _log


def stop():
    """Turn the log off (what is logged stays in its file)."""
    global _log
    _log = None


def record(key, right):
    """Add one attempt to the log, when it is on; never raises (a full disk must not stop a check)."""
    if _log is None:
        return
    try:
        line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "key": str(key)[:80], "right": bool(right)}
        with _log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    except Exception as error:  # a check must never raise because of its log
        print(f"(attempts not logged: {error})")


def summary(path):
    """{key: {"attempts", "right", "first_right"}} from a log file, exercises in the order first tried."""
    found = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            attempt = json.loads(line)
        except json.JSONDecodeError:  # a line cut short (a full disk, a kernel stopped mid-write)
            continue
        entry = found.setdefault(attempt["key"], {"attempts": 0, "right": False, "first_right": None})
        entry["attempts"] += 1
        if attempt["right"] and not entry["right"]:
            entry["right"], entry["first_right"] = True, attempt["time"]
    return found


def export(path=None):
    """Write the results file (rnns-results-<who>.json beside the log, unless `path` is given); return its path."""
    if _log is None:
        raise ValueError("export() needs the log on: run helpers.attempts.start('your name or id') first")
    who = _log.stem.removeprefix("rnns-attempts-")
    target = Path(path) if path is not None else _log.with_name(f"rnns-results-{who}.json")
    exercises = summary(_log)
    results = {
        "who": who,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "right": sum(entry["right"] for entry in exercises.values()),
        "tried": len(exercises),
        "exercises": exercises,
    }
    target.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"Wrote {target.name}: {results['right']} of {results['tried']} exercises tried are right. Hand it in.")
    return target

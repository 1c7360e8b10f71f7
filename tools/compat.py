"""make compat: helpers' tests on the oldest torch pyproject.toml accepts and on the newest on PyPI.

Students often have a torch already (a lab machine, a hosted notebook service), and helpers should
work with it rather than make them download another multi-GB build. For each of the two versions
this script builds a throwaway venv under build/compat/, installs that torch with every other pin
of requirements.txt (but numpy<2 for a torch older than 2.3, which cannot use NumPy 2) and helpers
itself, then

- runs the unit tests (a failure here fails `make compat`), leaving out the one test that checks
  the venv holds requirements.txt's torch, which a compat venv by design does not;
- runs every notebook through strict nbval exactly as `make nbval` does, only to report which
  stored outputs differ (one line each): they were made with requirements.txt's torch, and another
  version may word an error or draw random numbers differently. These never fail `make compat`;
- runs tools/hosted.py's hosted checks in the venv (hosted services ship a newer torch than our pin): the
  built wheel installed by notebook 01's first cell in a folder with only the notebooks, then notebooks 01,
  08 and 13 with the wheel; an unexpected error fails `make compat`.

At the end it prints, per torch version, the unit test counts and time, the notebook cells that
matched their stored outputs and the list of those that did not.

The oldest version is read from pyproject.toml (`torch>=X`), the newest from the package index
(`pip index versions torch`). PyPI's Linux torch wheels are CUDA builds of about 5 GB with their
dependencies; they run on a CPU. The venvs are removed at the end unless --keep is given.

    python tools/compat.py [--keep] [--torch VERSION ...]
"""

import argparse
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "compat"
# Checks that the venv is requirements.txt's; in a compat venv torch differs on purpose.
PINNED_VENV_TEST = "tests/test_environment.py::test_the_installed_packages_are_the_pinned_ones"
# nbval's names for the parts of an output, in words.
OUTPUTS = {"stdout": "printed text", "evalue": "error message", "ename": "error type", "text/plain": "value"}
NBVAL = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]


def oldest_supported():
    """X from pyproject.toml's `torch>=X`: the oldest torch helpers declare they support."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for dependency in dependencies:
        match = re.fullmatch(r"torch\s*>=\s*([0-9][0-9.]*)", dependency)
        if match:
            return match[1]
    raise SystemExit(f"pyproject.toml declares no 'torch>=X' among {dependencies}")


def newest_available():
    """The newest torch release the package index offers (pre-releases and local builds left out)."""
    listing = run([sys.executable, "-m", "pip", "index", "versions", "torch"], capture=True)
    versions = re.search(r"Available versions: (.*)", listing)[1].split(", ")
    return max((v for v in versions if re.fullmatch(r"[0-9]+(\.[0-9]+)*", v)), key=_release)


def _release(version):
    return tuple(int(part) for part in version.split("."))


def run(command, capture=False, check=True, **kwargs):
    """Run a command in the repository; return its output (stdout and stderr) when captured."""
    done = subprocess.run(command, cwd=ROOT, text=True, capture_output=capture, **kwargs)
    if check and done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, command))}\n{done.stdout or ''}{done.stderr or ''}")
    return (done.stdout or "") + (done.stderr or "") if capture else done.returncode


def build_venv(version):
    """A venv with torch==version, requirements.txt's other pins and helpers; returns its python."""
    venv = WORK / f"torch-{version}"
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    (venv / "requirements.txt").write_text("\n".join(other_requirements(version)) + "\n")
    # Captured: pip's notes on this machine's extra package folders would bury the summary (shown on failure).
    run([python, "-m", "pip", "install", "--quiet", f"torch=={version}", "-r", venv / "requirements.txt"], capture=True)
    run([python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", "."], capture=True)
    return python


def other_requirements(version):
    """requirements.txt without its torch pin; with torch older than 2.3, numpy below 2.

    PyPI's torch 2.2 and older were built against NumPy 1.x: with NumPy 2 they print "A module that
    was compiled using NumPy 1.x cannot be run in NumPy 2" and torch.from_numpy and Tensor.numpy
    raise "RuntimeError: Numpy is not available". Anyone with such a torch has numpy<2 already.
    """
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    others = [line for line in lines if not line.startswith("torch==")]
    if _release(version)[:2] < (2, 3):
        others = ["numpy<2" if line.startswith("numpy==") else line for line in others]
    return others


def unit_tests(python):
    """(passed?, pytest's summary line) of the unit tests in this venv."""
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--deselect", PINNED_VENV_TEST, "tests"]
    done = subprocess.run(command, cwd=ROOT, text=True, capture_output=True)
    if done.returncode != 0:
        print((done.stdout + done.stderr)[-4000:])
    return done.returncode == 0, pytest_summary(done.stdout)


def pytest_summary(output):
    """pytest's closing line ("1445 passed, 1 deselected in 53.04s"), without its = signs."""
    lines = re.findall(r"^=*\s*((?:\d+ \w+|no tests ran)(?:, \d+ \w+)* in [0-9.]+s\b.*?)\s*=*$", output, re.M)
    return lines[-1] if lines else "no closing line from pytest"


def notebook_cells(python):
    """(cells passed, cells run, {differing cell: what differs}) of strict nbval over every notebook."""
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", "-n", "2", "--dist", "loadfile"]
    output = run(command + NBVAL + notebooks, capture=True, check=False)
    differing = differences(output)
    passed = int((re.search(r"(\d+) passed", pytest_summary(output)) or [0, 0])[1])
    return passed, passed + len(differing), differing


def differences(output):
    """{"notebooks/NN_name.ipynb::Cell K": one line on what differs} from nbval's failure reports.

    Each report starts with a line "____ notebooks/NN_name.ipynb::Cell K ____", names the part that
    differs ("mismatch 'stdout'") and shows pytest's diff of `reference_output == test_output`, in
    which lines starting "- " are this run's output and "+ " the stored one.
    """
    differing = {}
    reports = re.findall(r"^_+ (notebooks/\S+::Cell \d+) _+$(.*?)(?=^_+ |^=+ |\Z)", output, re.M | re.S)
    for cell, report in reports:
        report = re.sub(r"\x1b\[[0-9;]*m", "", report)  # the kernel's traceback comes in colour
        kinds = [OUTPUTS.get(kind, kind) for kind in dict.fromkeys(re.findall(r"mismatch '([^']+)'", report))]
        if not kinds:  # nbval's own words: "Cell execution caused an exception", "Cell outputs differ"
            headline = (re.search(r"^Cell \d+: (.*)$", report, re.M) or [None, "failed"])[1]
            # The exception's last line, or what nbval says of a new or missing output (e.g. stderr).
            detail = re.findall(
                r"^(\w+(?:Error|Exception|Interrupt)\b.*|(?:Unexpected|Missing) output fields.*)$", report, re.M
            )
            differing[cell] = headline + (f": {_clip(detail[-1])}" if detail else "")
            continue
        diff = report.split("assert reference_output == test_output failed", 1)[-1]
        now, stored = re.search(r"^\s*- (.*)$", diff, re.M), re.search(r"^\s*\+ (.*)$", diff, re.M)
        reason = " and ".join(kinds) + (" differ" if len(kinds) > 1 else " differs")
        if now and stored:
            reason += f": now {_clip(now[1])!r}, stored {_clip(stored[1])!r}"
        differing[cell] = reason
    return dict(sorted(differing.items(), key=lambda item: _cell_order(item[0])))


def _clip(text, width=70):
    text = text.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def _cell_order(name):
    notebook, cell = name.split("::Cell ")
    return notebook, int(cell)


def check(version):
    """Build the venv, run both checks; returns a summary dict (and whether the unit tests passed)."""
    print(f"\n== torch {version}: building build/compat/torch-{version} ...", flush=True)
    start = time.monotonic()
    python = build_venv(version)
    version_check = [python, "-c", "import torch; print(torch.__version__)"]
    installed = subprocess.run(version_check, text=True, capture_output=True, check=True).stdout.strip()
    built = time.monotonic()
    ok, summary = unit_tests(python)
    tested = time.monotonic()
    passed, cells, differing = notebook_cells(python)
    checked = time.monotonic()
    print(f"   installed torch {installed} in {built - start:.0f} s")
    print(f"   unit tests: {summary} ({tested - built:.0f} s)")
    print(f"   nbval (report only): {passed}/{cells} cells as stored ({checked - tested:.0f} s)")
    for cell, what in differing.items():
        print(f"     differs: {cell}: {what}")
    hosted = run([sys.executable, "tools/hosted.py", "--venv", python.parent.parent], check=False) == 0
    print(f"   hosted checks: {'passed' if hosted else 'FAILED'} ({time.monotonic() - checked:.0f} s)")
    return {
        "version": installed,
        "ok": ok and hosted,
        "summary": summary + ("" if hosted else "; hosted checks FAILED"),
        "cells": (passed, cells),
        "differing": differing,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", nargs="+", help="versions to check (default: pyproject's oldest and the newest)")
    parser.add_argument("--keep", action="store_true", help="keep the venvs under build/compat/")
    args = parser.parse_args()
    versions = args.torch or [oldest_supported(), newest_available()]
    start = time.monotonic()
    results = []
    try:
        for version in versions:
            results.append(check(version))
    finally:
        if not args.keep:
            shutil.rmtree(WORK, ignore_errors=True)
    kept = "kept in build/compat/" if args.keep else "removed"
    print(f"\nmake compat: {time.monotonic() - start:.0f} s in all (venvs {kept})")
    for r in results:
        passed, cells = r["cells"]
        print(f"  torch {r['version']}: unit tests {r['summary']}; nbval {passed}/{cells} cells as stored")
        for cell, what in r["differing"].items():
            print(f"    differs: {cell}: {what}")
    if not all(r["ok"] for r in results):
        sys.exit(
            "make compat: unit tests or hosted checks failed on "
            + ", ".join(r["version"] for r in results if not r["ok"])
        )


if __name__ == "__main__":
    main()

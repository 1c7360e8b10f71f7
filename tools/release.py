"""make release: a course release for students, and an Otter-Grader autograder for the instructor.

build/release/ gets three folders:

student/      what students get: the notebooks, the reference pages, and a wheel of the package in which
              helpers/solutions/ holds a sealed answer key (helpers/answer_key.py) instead of the reference
              solutions. check() and check_code() answer as before, with the same hints; solution() says
              the answers stay with the instructor. The notebooks' first cell installs that wheel from the
              notebook's own folder where the package is missing; sentences offering solution() are replaced.
autograder/   one Otter-Grader autograder zip per notebook (`otter run -a ZIP SUBMISSION.ipynb` grades one
              submission here; the same zip configures Gradescope), built by `otter generate` from one test
              file per exercise: each runs helpers.exercises.check (or check_code) on the variable or function
              the exercise cell names, with the full references of the package installed where grading runs.
              A value exercise is worth 1 point, a write-it-yourself exercise 2.
round-trip/   the check that grading works (--round-trip, run by make release): each student notebook with
              every answer filled in from the references must get full marks; with one value answer set to an
              expected mistake and one function left unwritten, the marks expected for that.

    python tools/release.py                      build student/ and autograder/ for every notebook
    python tools/release.py --notebooks 01 08    only these notebooks
    python tools/release.py --round-trip         and grade the filled-in notebooks with otter run
"""

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "release"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PAGES = ["notebooks/glossary.md", "notebooks/shapes.md"]
POINTS = {"value": 1, "code": 2}
# The exercise cells: helpers.exercises.check("07.h_n_shape", my_shape) or check_code("01.step", rnn_step).
CHECK = re.compile(r"helpers\.exercises\.(check|check_code)\(\s*\"([0-9]{2}\.[a-z0-9_]+)\"\s*,\s*([A-Za-z_]\w*)\s*\)")
OFFER = re.compile(
    r"Stuck\?\s+`helpers\.exercises\.solution\(\"[^\"]+\"\)`\s+shows\s+an?\s+(?:answer|reference)\s+and\s+why\s+it\s+is\s+right\."
)
KEPT_BACK = "Stuck? Ask your instructor: in this course's copy the reference answers stay with them."
INSTALL = "%pip install --quiet rnns-by-hand\n"


def exercise_cells(notebook):
    """[(cell index, 'check' or 'check_code', key, the variable or function the cell checks)] of a notebook."""
    cells = json.loads(notebook.read_text())["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            found += [(index, *match.groups()) for match in CHECK.finditer("".join(cell["source"]))]
    return found


# student/: the sealed package and the notebooks.


def without_solution_sources(folder, names):
    """copytree's ignore: caches, and every module of helpers/solutions/ (its __init__.py is written anew)."""
    if Path(folder) == ROOT / "helpers" / "solutions":
        return {name for name in names if name == "__pycache__" or name.endswith(".py")}
    return {name for name in names if name == "__pycache__"}


def build_student_wheel(work, target):
    """Build the package with a sealed key in place of helpers/solutions/'s sources; return the wheel's path."""
    import torch

    from helpers import answer_key, exercises

    stage = work / "package"
    shutil.copytree(ROOT / "helpers", stage / "helpers", ignore=without_solution_sources)
    for name in ["setup.py", "MANIFEST.in", "README.md", "LICENSE", "LICENSE-CC-BY-4.0"]:
        shutil.copy(ROOT / name, stage / name)
    for page in PAGES:
        (stage / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, stage / page)
    pyproject = (ROOT / "pyproject.toml").read_text()
    pyproject = pyproject.replace('"*.js", "*.css"', '"*.pt", "*.js", "*.css"', 1)
    if '"*.pt"' not in pyproject:
        sys.exit("tools/release.py: pyproject.toml's package-data no longer reads as expected")
    (stage / "pyproject.toml").write_text(pyproject)
    solutions = stage / "helpers" / "solutions"
    torch.save(answer_key.seal_all(exercises.exercises(), exercises.open_reference), solutions / "key.pt")
    (solutions / "__init__.py").write_text(
        '"""The exercises of a course release: a sealed answer key (helpers/answer_key.py), not the solutions."""\n\n'
        "from pathlib import Path\n\nimport torch\n\nfrom helpers import answer_key\n\n"
        'BY_KEY = answer_key.load(torch.load(Path(__file__).with_name("key.pt"), weights_only=True))\n'
    )
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", target, stage])
    (wheel,) = Path(target).glob("rnns_by_hand-*.whl")
    return wheel


def student_notebook(notebook, wheel_name):
    """The notebook as students of the course get it: no offer of solution(), the course's wheel installed."""
    data = json.loads(notebook.read_text())
    for cell in data["cells"]:
        text = "".join(cell["source"])
        changed = OFFER.sub(KEPT_BACK, text)
        if cell["cell_type"] == "code" and INSTALL in changed:
            changed = changed.replace(
                INSTALL, f"%pip install --quiet {wheel_name}  # the course's copy, beside this notebook\n"
            )
        if changed != text:
            cell["source"] = changed.splitlines(keepends=True)
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if "exercises.solution(" in text:
        sys.exit(f"tools/release.py: {notebook.name} still offers helpers.exercises.solution(); update OFFER")
    return text


# Run with python -S (no site: the checkout's editable install stays out) and the wheel first on the path.
SEALED_CHECK = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[3]]
import helpers
from helpers import exercises
from helpers.exercise_types import Exercise
assert helpers.__file__.startswith(sys.argv[1]), helpers.__file__
keys = exercises.exercises()
assert len(keys) == int(sys.argv[2]) and not any(isinstance(e, Exercise) for e in keys.values()), len(keys)
assert exercises.check("01.output_shape", (10, 1, 1)) and not exercises.check("01.output_shape", (1, 10, 1))
exercises.solution("01.h_4")
"""


def check_student_release(wheel, student, work):
    """Stop unless the student wheel has no solution source and no explanation, and checks answers when installed."""
    import inspect
    import zipfile

    from helpers import exercises

    unpacked = work / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        sources = [name for name in archive.namelist() if re.search(r"solutions/(?!__init__\.py$)[^/]+\.py$", name)]
        if sources:
            sys.exit(f"tools/release.py: the student wheel holds solution sources: {sources}")
        archive.extractall(unpacked)
    texts = [p.read_text(errors="replace") for p in unpacked.rglob("*") if p.suffix in {".py", ".md", ".json", ".txt"}]
    texts += ["".join(c["source"]) for p in student.glob("*.ipynb") for c in json.loads(p.read_text())["cells"]]
    texts = [" ".join(text.split()) for text in texts]  # spaces and line breaks do not hide a copy
    for key, exercise in exercises.exercises().items():
        secret = [exercise.explanation]
        if getattr(exercise, "reference", None) is not None:  # a reference's body, without its def line
            secret.append(inspect.getsource(exercise.reference).split("\n", 1)[1])
        found = [s for s in secret if s and any(" ".join(s.split()) in text for text in texts)]
        if found:
            sys.exit(f"tools/release.py: the student release shows {key}'s answer: {found[0]!r}")
    done = subprocess.run(
        [
            str(a)
            for a in [
                sys.executable,
                "-S",
                "-c",
                SEALED_CHECK,
                unpacked,
                len(exercises.exercises()),
                sysconfig.get_paths()["purelib"],
            ]
        ],
        text=True,
        capture_output=True,
    )
    if done.returncode != 0 or "reference answers stay with your instructor" not in done.stdout:
        sys.exit(
            f"tools/release.py: the student wheel does not check answers as it should:\n{done.stdout}{done.stderr}"
        )


# autograder/: Otter-Grader test files and zips.

TEST_FILE = '''"""{key}: {question}"""

import contextlib
import io

from otter.test_files import test_case

OK_FORMAT = False
name = {key!r}
points = {points}


@test_case(points={points}, hidden=False)
def test_{slug}(env):
    from helpers import exercises

    with contextlib.redirect_stdout(io.StringIO()):
        verdict = exercises.{check}({key!r}, env.get({variable!r}))
    assert verdict, verdict.line
'''


def build_autograder(notebook, open_wheel, target, work):
    """The Otter-Grader zip of one notebook; returns (its path, {key: points})."""
    from helpers import exercises

    tests = work / notebook.stem / "tests"
    tests.mkdir(parents=True)
    points = {}
    for _, check, key, variable in exercise_cells(notebook):
        kind = "code" if check == "check_code" else "value"
        points[key] = POINTS[kind]
        (tests / f"{key.replace('.', '_')}.py").write_text(
            TEST_FILE.format(
                key=key,
                question=exercises.exercises()[key].question,
                points=points[key],
                slug=key.replace(".", "_"),
                check=check,
                variable=variable,
            )
        )
    requirements = work / notebook.stem / "requirements.txt"
    requirements.write_text((ROOT / "requirements.txt").read_text() + f"/autograder/source/files/{open_wheel.name}\n")
    shutil.copy(open_wheel, work / notebook.stem / open_wheel.name)  # support files must sit in the working folder
    zip_path = target / f"{notebook.stem}-autograder.zip"
    config = work / notebook.stem / "otter_config.json"
    config.write_text(json.dumps({"lang": "python", "show_stdout": False, "show_hidden": True}, indent=2))
    run(
        [otter(), "generate", "-t", tests, "-r", requirements, "-c", config, "-o", zip_path, open_wheel.name],
        cwd=work / notebook.stem,
    )
    return zip_path, points


def otter():
    return str(Path(sys.executable).with_name("otter"))


# round-trip/: answers filled in from the references, graded.


def filled_notebook(text, answers):
    """A student notebook with each exercise cell's None or ... replaced: answers[key] is the code to put in."""
    data = json.loads(text)
    for cell in data["cells"]:
        source = "".join(cell["source"])
        for check, key, variable in [m.groups() for m in CHECK.finditer(source)]:
            if key not in answers:
                continue
            if check == "check":
                source, count = re.subn(rf"^{variable} = None$", f"{variable} = {answers[key]}", source, flags=re.M)
            else:
                source, count = re.subn(
                    rf"^def {variable}\(.*?(?=^\S|\Z)", answers[key] + "\n\n", source, flags=re.M | re.S
                )
            if count != 1:
                sys.exit(f"tools/release.py: cannot fill in {key} ({variable}) in its cell")
        cell["source"] = source.splitlines(keepends=True)
    return json.dumps(data, indent=1)


def reference_answers(notebook):
    """The code that answers each exercise of `notebook` with its reference: a literal, or the reference function."""
    from helpers import exercises

    answers = {}
    for _, check, key, variable in exercise_cells(notebook):
        exercise = exercises.exercises()[key]
        if check == "check":
            value = exercises._expected(exercise)
            if ast.literal_eval(repr(value)) != value:
                sys.exit(f"tools/release.py: the reference of {key} has no literal to write in a cell")
            answers[key] = repr(value)
        elif exercise.layer is not None or exercise.reference is not None:  # the reference, from the full package
            answers[key] = (
                f"from helpers.solutions import BY_KEY as _references\n\n{variable} = _references[{key!r}].reference"
            )
    return answers


def round_trip(notebook, student_text, zip_path, points, work):
    """Grade the filled-in notebook (full marks) and a partly wrong one (the marks expected); return seconds taken."""
    from helpers import exercises

    right = reference_answers(notebook)
    wrong = dict(right)
    value_keys = [k for k, p in points.items() if p == POINTS["value"]]
    code_keys = [k for k, p in points.items() if p == POINTS["code"]]
    lost = 0
    for key in [k for k in value_keys if exercises.exercises()[k].mistakes][:1]:  # an expected mistake
        mistake = exercises.exercises()[key].mistakes[0]
        wrong[key] = repr(exercises._plain(exercises._quietly(mistake.answer)))
        lost += points[key]
    for key in code_keys[:1]:  # left as the student got it
        del wrong[key]
        lost += points[key]
    total = sum(points.values())
    started = time.perf_counter()
    for label, answers, expected in [("right", right, total), ("wrong", wrong, total - lost)]:
        folder = work / notebook.stem / label
        folder.mkdir(parents=True)
        submission = folder / notebook.name
        submission.write_text(filled_notebook(student_text, answers))
        run([otter(), "run", "-a", zip_path, "-o", folder, "--no-logo", submission], cwd=folder)
        results = json.loads((folder / "results.json").read_text())
        scored = [test for test in results["tests"] if "score" in test]
        score = sum(test["score"] for test in scored)
        if score != expected:
            failed = [t["name"] + ": " + t.get("output", "") for t in scored if t["score"] < t["max_score"]]
            sys.exit(
                f"round trip {notebook.stem} ({label}): {score} of {total}, expected {expected}\n" + "\n".join(failed)
            )
        print(f"  {notebook.stem}: {label} answers graded {score:g} of {total:g}, as expected")
    return time.perf_counter() - started


def shown(path):
    """A path as the repository's folders name it, where it is inside the repository."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def run(command, cwd=ROOT):
    done = subprocess.run([str(c) for c in command], cwd=cwd, text=True, capture_output=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, command))}\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="numbers of the notebooks (default: all)")
    parser.add_argument("--round-trip", action="store_true", help="grade filled-in notebooks with otter run")
    parser.add_argument("--out", type=Path, default=OUT, help="where the release goes (default build/release)")
    args = parser.parse_args()
    chosen = [nb for nb in NOTEBOOKS if not args.notebooks or nb.name[:2] in args.notebooks]
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    student, autograder = out / "student", out / "autograder"
    for folder in (student, autograder):
        folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        wheel = build_student_wheel(work, student)
        open_wheel_dir = work / "open"
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                open_wheel_dir,
                ROOT,
            ]
        )
        (open_wheel,) = open_wheel_dir.glob("rnns_by_hand-*.whl")
        for page in PAGES:
            shutil.copy(ROOT / page, student)
        for notebook in chosen:
            (student / notebook.name).write_text(student_notebook(notebook, wheel.name))
        check_student_release(wheel, student, work)
        print(f"student release checked: {wheel.name} holds a sealed key, no solution source, no explanation")
        seconds = 0.0
        for notebook in chosen:
            text = (student / notebook.name).read_text()
            zip_path, points = build_autograder(notebook, open_wheel, autograder, work / "grading")
            print(f"{notebook.stem}: {len(points)} exercises, {sum(points.values())} points -> {shown(zip_path)}")
            if args.round_trip:
                seconds += round_trip(notebook, text, zip_path, points, out / "round-trip")
    print(f"student release: {shown(student)} ({wheel.name}); autograders: {shown(autograder)}")
    if args.round_trip:
        print(f"round trip: {len(chosen)} notebooks graded twice in {seconds:.0f} s")


if __name__ == "__main__":
    main()

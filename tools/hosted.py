"""make hosted: the series as students get it outside this repository, on a machine that has never seen it.

1. Builds the sdist and the wheel (`python -m build`) into build/hosted/dist/.
2. Makes a venv with Binder's own install steps: `pip install -r binder/requirements.txt` from the
   repository's root, then `binder/postBuild` (which installs this package, not editable). The venv is kept in
   ~/.cache/rnns-by-hand/ under a hash of what decides its contents (binder/requirements.txt,
   requirements.txt, pyproject's dependencies, Python's version), so a rerun only re-installs the package; a
   new hash starts a fresh venv. Two things differ from Binder: PyTorch's CPU index is left out (this machine
   reaches only PyPI), so the `-c` path is given in full; and Python is this machine's, not runtime.txt's.
3. Binder: checks that helpers is imported from the venv's site-packages (not from the checkout) and that
   JupyterLab lists jupyterlab-slideshow, then executes a notebook in the checkout, as Binder would.
4. A hosted service where nothing is installed yet (Colab, Kaggle): uninstalls rnns-by-hand, copies only
   what a hosted user gets (HOSTED: the notebooks, glossary.md, shapes.md, the licences) into an empty
   folder, and executes notebook 01 there: its first cell must install the package (pip is pointed at
   the wheel of step 1 and nothing else, standing in for PyPI).
5. Hosted with that wheel installed (a student's own Python, a hub image): executes notebooks 01, 08 and 13
   in that folder.

Each notebook runs top to bottom with nbclient in a kernel of the venv, with HOME and Jupyter's folders
in a temporary folder. A cell tagged raises-exception must raise; any other error fails the run.

    python tools/hosted.py                      (make hosted; part of make test)
    python tools/hosted.py --venv PATH          steps 4-5 in an existing venv (make compat: another torch)
"""

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "hosted"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rnns-by-hand"
# What a student on a hosted service gets: the notebooks and the pages they link, and the licences.
HOSTED = ["notebooks/[0-9][0-9]_*.ipynb", "notebooks/*.md", "LICENSE", "LICENSE-CC-BY-4.0"]
FRESH = ["01_scalar_rnn.ipynb"]  # step 4: the first cell installs the package
INSTALLED = ["01_scalar_rnn.ipynb", "08_variable_length.ipynb", "13_text_to_predictions.ipynb"]  # step 5
BINDER = ["10_lstm.ipynb"]  # step 3, in the checkout's notebooks/
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"


def run(command, **kwargs):
    """Run a command from the repository's root; stop with its output if it fails."""
    done = subprocess.run(command, cwd=kwargs.pop("cwd", ROOT), text=True, capture_output=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, command))}\n{done.stdout}{done.stderr}")
    return done.stdout


def build_dist():
    """The sdist and the wheel, built as a publisher builds them; returns the folder."""
    dist = WORK / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, "."])
    return dist


def binder_requirements():
    """binder/requirements.txt without PyTorch's CPU index (unreachable here), its -c path made absolute."""
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    if CPU_INDEX not in lines:
        sys.exit("binder/requirements.txt no longer names PyTorch's CPU index: update tools/hosted.py")
    constraint = "-c " + str(ROOT / "requirements.txt")
    return [constraint if line == "-c ../requirements.txt" else line for line in lines if line != CPU_INDEX]


def venv_key():
    """A hash of everything that decides what Binder's steps put into the venv (but this package's code)."""
    # Files' contents, never paths: every clone of the repository (CI's are fresh ones) finds the same venv.
    parts = [platform.python_version()] + [
        (ROOT / name).read_text() for name in ("binder/requirements.txt", "requirements.txt")
    ]
    parts += tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def binder_venv():
    """The venv after Binder's install steps (reused while its key holds); returns its python."""
    venv = CACHE / f"binder-{venv_key()}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        for old in CACHE.glob("binder-*"):  # one venv at a time (about 1.5 GB each)
            shutil.rmtree(old)
        print(f"  fresh venv {venv} (no cached one for these requirements)", flush=True)
        run([sys.executable, "-m", "venv", venv])
    requirements = WORK / "binder-requirements.txt"
    requirements.write_text("\n".join(binder_requirements()) + "\n")
    run([python, "-m", "pip", "install", "--quiet", "-r", requirements])
    env = {**os.environ, "NB_PYTHON_PREFIX": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    run(["bash", "binder/postBuild"], env=env)
    (venv / ".complete").touch()
    where = run([python, "-c", "import helpers; print(helpers.__file__)"], cwd=WORK).strip()
    if not where.startswith(f"{venv}/lib/"):
        sys.exit(
            f"after Binder's steps helpers comes from {where}, not the venv's site-packages (an editable install?)"
        )
    listed = subprocess.run([venv / "bin" / "jupyter", "labextension", "list"], env=env, capture_output=True, text=True)
    if "jupyterlab-slideshow" not in listed.stdout + listed.stderr:  # JupyterLab lists them on stderr
        sys.exit(f"after Binder's steps JupyterLab does not list jupyterlab-slideshow:\n{listed.stderr}")
    return python


def hosted_folder():
    """An empty folder holding only HOSTED; returns it."""
    folder = WORK / "hosted"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for pattern in HOSTED:
        for path in sorted(ROOT.glob(pattern)):
            shutil.copy(path, folder / path.name)
    return folder


def execute(python, folder, notebooks, env=None):
    """Run each notebook in folder with nbclient under `python`; stop at the first unexpected error."""
    for name in notebooks:
        start = time.monotonic()
        done = subprocess.run(
            [python, __file__, "--execute", folder / name], cwd=folder, text=True, capture_output=True, env=env
        )
        if done.returncode != 0:
            sys.exit(f"{folder.name}/{name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        print(f"    {name}: {done.stdout.strip()} ({time.monotonic() - start:.1f} s)", flush=True)


def execute_here(path):
    """In the venv under test: run the notebook with nbclient; every error must be in a raises-exception cell."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    # Every cell runs (allow_errors); then each error is matched against its cell's tag.
    resources = {"metadata": {"path": path.parent}}
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True, resources=resources).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    errors = 0
    for number, cell in enumerate(code, 1):
        raised = [output for output in cell.outputs if output.output_type == "error"]
        expected = "raises-exception" in cell.metadata.get("tags", [])
        if raised and not expected:
            sys.exit(f"code cell {number} raised {raised[0].ename}: {raised[0].evalue}")
        if expected and not raised:
            sys.exit(f"code cell {number} is tagged raises-exception but raised nothing")
        errors += bool(raised)
    print(f"{len(code)} code cells, {errors} deliberate errors, no other error")


def sandbox(python, temp, **extra):
    """The environment a notebook runs in: the venv first on PATH, HOME and Jupyter's folders in temp."""
    home = Path(temp) / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "PATH": f"{Path(python).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        env[name] = str(home / name.lower())
    for name in ("JUPYTER_PATH", "VIRTUAL_ENV", "PYTHONPATH", "MPLBACKEND"):
        env.pop(name, None)
    return {**env, **extra}


def hosted_checks(python, dist):
    """Steps 4 and 5 with the venv of `python`."""
    (wheel,) = dist.glob("*.whl")
    folder = hosted_folder()
    with tempfile.TemporaryDirectory(prefix="hosted-", dir=WORK) as temp:
        run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "rnns-by-hand"])
        # pip finds packages in dist/ only, where PyPI would offer rnns-by-hand.
        fresh = sandbox(python, temp, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(dist))
        print(f"  hosted, nothing installed ({len(list(folder.iterdir()))} files in {folder.relative_to(ROOT)}):")
        execute(python, folder, FRESH, fresh)
        shown = run([python, "-m", "pip", "show", "--files", "rnns-by-hand"])
        if "helpers/solutions/text_to_predictions.py" not in shown:
            sys.exit(f"notebook 01's first cell did not install {wheel.name}:\n{shown}")
        print(f"  hosted, {wheel.name} installed (by that first cell):")
        execute(python, folder, INSTALLED, sandbox(python, temp))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, help="run steps 4-5 in this venv (its rnns-by-hand is replaced)")
    parser.add_argument("--execute", type=Path, help=argparse.SUPPRESS)  # internal: run one notebook here
    args = parser.parse_args()
    if args.execute:
        return execute_here(args.execute.resolve())
    start = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    dist = build_dist()
    print(f"make hosted: built {', '.join(sorted(path.name for path in dist.iterdir()))}", flush=True)
    if args.venv:
        python = args.venv.resolve() / "bin" / "python"
    else:
        python = binder_venv()
        print(f"  Binder's install steps done ({time.monotonic() - start:.0f} s); in the checkout:", flush=True)
        with tempfile.TemporaryDirectory(prefix="binder-", dir=WORK) as temp:
            execute(python, ROOT / "notebooks", BINDER, sandbox(python, temp))
    hosted_checks(python, dist)
    print(f"make hosted: passed in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()

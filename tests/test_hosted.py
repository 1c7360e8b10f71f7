"""Starting outside this repository: the notebooks' first cell, the folder a hosted user gets, Binder's files,
and tools/hosted.py's verdicts (`make hosted` runs the whole thing: a wheel, a venv, notebooks)."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture
def hosted(script):
    """tools/hosted.py, loaded afresh (a test may change its ROOT)."""
    return script("tools/hosted.py")


def first_code(path):
    return next(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")


def guard(source):
    """The first cell's two guards (the install, the check after `import helpers`), each to its blank line."""
    lines = source.splitlines() + [""]

    def block(prefix):
        start = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        return lines[start : lines.index("", start)]

    return block('if importlib.util.find_spec("helpers") is None:') + block('if not hasattr(helpers, "unroll"):')


def test_every_notebook_s_first_cell_holds_the_same_install_and_check():
    """One set-up guard, word for word, in all notebooks: `%pip install rnns-by-hand` only where helpers is missing."""
    guards = {path.name: guard(first_code(path)) for path in NOTEBOOKS}
    assert len(set(map(tuple, guards.values()))) == 1, "the notebooks' first cells differ in their guard"
    text = "\n".join(next(iter(guards.values())))
    assert 'if importlib.util.find_spec("helpers") is None:\n    %pip install --quiet rnns-by-hand' in text
    assert "could not install this series' package" in text


def run_first_cell(tmp_path):
    """Run notebook 01's first cell (IPython syntax made Python) in a fresh interpreter in tmp_path."""
    code = TransformerManager().transform_cell(first_code(NOTEBOOKS[0]))
    (tmp_path / "cell.py").write_text(code)  # with helpers importable, the %pip line (get_ipython) never runs
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "cell.py"], cwd=tmp_path, env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "shadow",
    [
        ("helpers.py", "print('my own helpers')\n"),  # a student's file beside the notebooks
        ("helpers/__init__.py", "VERSION = '0.2.0'\n"),  # another package of that name (PyPI has one)
        ("helpers/notes.txt", "a folder named helpers, no __init__.py\n"),  # a namespace package
    ],
    ids=["module", "package", "folder"],
)
def test_a_different_module_named_helpers_is_named_with_the_fix(tmp_path, shadow):
    """The first cell raises ImportError naming where `import helpers` looked, and says how to fix it."""
    name, text = shadow
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text(text)
    result = run_first_cell(tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: `import helpers` found ") and str(tmp_path / "helpers") in last
    assert "rename that file or folder" in last and "restart the kernel" in last
    assert "`%pip uninstall -y helpers`" in last  # -y: pip cannot ask for a yes inside a kernel


def test_a_failed_install_says_why_in_plain_words_instead_of_module_not_found(tmp_path):
    """No helpers and pip installs nothing (no internet, Kaggle's Internet off): the cell names the cause."""
    code = TransformerManager().transform_cell(first_code(NOTEBOOKS[0]))
    fake = (
        "class Shell:\n"
        "    def run_line_magic(self, *args): print('magic', *args)  # pip that installs nothing\n"
        "get_ipython = Shell\n"
    )
    (tmp_path / "cell.py").write_text(fake + code)
    # -S -I: no site-packages, so no helpers (nor anything else installed)
    result = subprocess.run([sys.executable, "-S", "-I", "cell.py"], cwd=tmp_path, capture_output=True, text=True)
    assert result.stdout == "magic pip install --quiet rnns-by-hand\n"
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: could not install this series' package, rnns-by-hand: give the notebook")


def test_with_this_series_helpers_the_first_cell_prints_nothing_and_installs_nothing(tmp_path):
    """Where helpers is importable the guard is a no-op: no pip, no output (the stored outputs stay empty)."""
    result = run_first_cell(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    for path in NOTEBOOKS:
        first = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
        assert first.outputs == [], f"{path.name}: the first cell has stored output"


def hosted_names(hosted):
    """The file names a hosted user's folder holds (tools/hosted.py's HOSTED)."""
    return {path.name for pattern in hosted.HOSTED for path in ROOT.glob(pattern)}


def local_links(text):
    """Link targets in markdown and HTML that are not web addresses or anchors in the same page."""
    targets = re.findall(r"\]\(([^)\s]+)", text) + re.findall(r'(?:href|src)="([^"]+)"', text)
    return [t for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


@pytest.mark.parametrize("path", [*NOTEBOOKS, *sorted((ROOT / "notebooks").glob("*.md"))], ids=lambda p: p.name)
def test_every_link_from_a_notebook_or_its_pages_is_in_the_hosted_folder(path, hosted):
    """A hosted copy (the notebooks folder alone) lacks no target: no ../docs/, no repository-only file."""
    if path.suffix == ".ipynb":
        cells = nbformat.read(path, as_version=4).cells
        text = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    else:
        text = path.read_text()
    names = hosted_names(hosted)
    missing = [target for target in local_links(text) if target.split("#")[0] not in names]
    assert not missing, f"{path.name} links {missing}, which a hosted folder lacks"


def test_the_hosted_folder_holds_the_notebooks_their_pages_and_the_licences(hosted):
    names = hosted_names(hosted)
    assert {path.name for path in NOTEBOOKS} | {"glossary.md", "shapes.md", "LICENSE", "LICENSE-CC-BY-4.0"} == names


def test_binder_installs_the_pinned_versions_the_package_not_editable_and_the_live_slides(hosted):
    """binder/: requirements pinned by requirements.txt with PyTorch's CPU index, Python 3.11, postBuild's `pip install .`."""
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert hosted.CPU_INDEX in lines and "-c ../requirements.txt" in lines
    assert {"torch", "jupyterlab", "jupyterlab-slideshow", "ipywidgets", "ipykernel"} <= set(lines)
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = ROOT / "binder" / "postBuild"
    assert post_build.stat().st_mode & 0o111, "postBuild must be executable"
    text = post_build.read_text()
    assert "pip install --no-cache-dir --quiet -c requirements.txt .\n" in text and "-e ." not in text
    assert "config/jupyterlab-overrides.json" in text


@pytest.mark.parametrize(
    ("cells", "verdict"),
    [
        (
            [("x = 1", []), ("raise ValueError('on purpose')", ["raises-exception"])],
            "1 deliberate errors, no other error",
        ),
        ([("x = 1", []), ("1 / 0", [])], "code cell 2 raised ZeroDivisionError: division by zero"),
        ([("x = 1", ["raises-exception"])], "code cell 1 is tagged raises-exception but raised nothing"),
    ],
    ids=["deliberate", "unexpected", "missing"],
)
def test_a_notebook_passes_only_if_every_error_is_a_deliberate_one(tmp_path, cells, verdict):
    """tools/hosted.py --execute: deliberate errors allowed, any other error or a missing one fails."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source, metadata={"tags": tags}) for source, tags in cells]
    )
    path = tmp_path / "check.ipynb"
    nbformat.write(notebook, path)
    result = subprocess.run(
        [sys.executable, ROOT / "tools" / "hosted.py", "--execute", path], capture_output=True, text=True
    )
    assert verdict in result.stdout + result.stderr
    assert (result.returncode == 0) == verdict.endswith("no other error")


def test_the_cached_venv_s_key_depends_on_the_files_contents_not_on_where_the_clone_is(tmp_path, monkeypatch, hosted):
    """CI clones afresh each time: the same requirements must find the same venv; a changed pin a new one."""
    for name in ("binder/requirements.txt", "requirements.txt", "pyproject.toml"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text())
    here = hosted.venv_key()
    monkeypatch.setattr(hosted, "ROOT", tmp_path)
    assert hosted.venv_key() == here
    (tmp_path / "requirements.txt").write_text((ROOT / "requirements.txt").read_text().replace("torch==", "torch>="))
    assert hosted.venv_key() != here


def test_the_readme_gives_every_notebook_s_memory_and_time_for_hub_admins():
    """README's JupyterHub table (from benchmarks/resources.py) has a row for each notebook and the server."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### On a JupyterHub") : readme.index("### Static decks")]
    for path in NOTEBOOKS:
        assert re.search(rf"^\| {path.stem} \| \d+ \| [0-9.]+ \| [0-9.]+ \|$", section, re.M), path.stem
    assert "JupyterLab's server, notebook 01 open and run" in section

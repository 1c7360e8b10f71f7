"""Makefile targets that act on a student's files: `make restore` (tools/restore_notebook.sh).

Each test runs make in a small git repository under tmp_path holding the Makefile, the script,
.gitignore and one committed notebook; restore needs no venv, so nothing is installed.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NB = "notebooks/05_stacked_layers.ipynb"
COMMITTED = json.dumps(
    {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "committed"}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
)


def run(repo, *command, check=True):
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture
def repo(tmp_path):
    """A git repository with this checkout's Makefile (and what it names), the script and one notebook."""
    for name in ("Makefile", ".gitignore", "requirements.txt", "pyproject.toml", "tools/restore_notebook.sh"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / NB).write_text(COMMITTED)
    run(tmp_path, "git", "init", "-q")
    run(tmp_path, "git", "add", ".")
    run(tmp_path, "git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "start")
    return tmp_path


def restore(repo, nb=NB, check=True):
    return run(repo, "make", "-s", "restore", f"NB={nb}", check=check)


def backups(repo):
    return sorted((repo / "notebooks" / "backups").glob("*.ipynb"))


def test_restore_puts_the_committed_notebook_back_and_keeps_the_students_in_a_dated_backup(repo):
    """The notebook is as committed again; the student's text is in notebooks/backups/NN_name-<date>-<time>.ipynb."""
    (repo / NB).write_text("my own work")
    said = restore(repo).stdout
    assert (repo / NB).read_text() == COMMITTED
    (backup,) = backups(repo)
    assert backup.read_text() == "my own work"
    assert backup.name.startswith("05_stacked_layers-20") and str(backup.relative_to(repo)) in said
    assert run(repo, "git", "status", "--porcelain").stdout == "", "the backup should be ignored by git"


def test_a_second_restore_keeps_the_first_backup(repo):
    """Two restores in the same minute make two backups; the first is never overwritten."""
    (repo / NB).write_text("first try")
    restore(repo)
    (repo / NB).write_text("second try")
    restore(repo)
    assert sorted(b.read_text() for b in backups(repo)) == ["first try", "second try"]
    assert (repo / NB).read_text() == COMMITTED


def test_restore_of_an_unchanged_notebook_makes_no_backup(repo):
    """Nothing to restore: it says so, and writes nothing."""
    assert "same as its committed version" in restore(repo).stdout
    assert backups(repo) == []


def test_restore_brings_back_a_deleted_notebook(repo):
    """A notebook deleted by mistake comes back (there is nothing to back up)."""
    (repo / NB).unlink()
    restore(repo)
    assert (repo / NB).read_text() == COMMITTED


@pytest.mark.parametrize("nb", ["", "notebooks/99_nothing.ipynb", "Makefile", "notebooks/backups/x.ipynb"])
def test_restore_refuses_a_missing_or_unknown_notebook(repo, nb):
    """No NB, or one that git never had: a clear message, the list of notebooks, a failing exit status."""
    done = restore(repo, nb, check=False)
    assert done.returncode != 0
    assert "make restore" in done.stderr and NB in done.stderr
    assert (repo / NB).read_text() == COMMITTED


def test_backups_are_not_lessons(repo):
    """nbval and slides (the Makefile's NOTEBOOKS) and lint (ruff, through .gitignore) never see a backup."""
    code = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "import os"}
    (repo / NB).write_text(json.dumps({"cells": [code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    restore(repo)
    assert backups(repo), "no backup was made"
    listed = run(repo, "make", "-s", "--eval=print-notebooks: ; @echo $(NOTEBOOKS)", "print-notebooks").stdout
    assert listed.split() == [NB]
    ruff = Path(sys.executable).with_name("ruff")
    assert run(repo, ruff, "check", "--no-cache", "notebooks").returncode == 0  # the backup's unused import is not seen


def test_ci_runs_every_step_of_make_test_and_make_test_browser():
    """.ci/run splits make test in two (setup, lint and slides first; the rest beside make test-browser): together
    the two halves name every prerequisite of make test, and make test-browser itself."""
    makefile = (ROOT / "Makefile").read_text()
    steps = next(line for line in makefile.splitlines() if line.startswith("test:")).split("##")[0].split()[1:]
    commands = [line.split() for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    named = {word for command in commands for word in command[1:] if not word.startswith((">", "&", "2>"))}
    assert steps and set(steps) <= named, f"make test's {sorted(set(steps) - named)} are not in .ci/run"
    assert ["make", "test-browser"] in [command[:2] for command in commands]

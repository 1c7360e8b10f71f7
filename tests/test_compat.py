"""make compat (tools/compat.py): the torch range it checks comes from pyproject.toml, and README states it.

The heavy part (venvs with other torch builds) runs only in `make compat`; these tests check the
pieces it is built from.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compat(script):
    return script("tools/compat.py")


def test_the_oldest_torch_is_pyprojects_lower_bound_and_not_above_the_pin(compat):
    """One number in one place: pyproject's `torch>=X`; the pinned torch of the notebooks is inside the range."""
    oldest = compat.oldest_supported()
    assert re.search(rf'"torch>={re.escape(oldest)}"', (ROOT / "pyproject.toml").read_text())
    pinned = re.search(r"^torch==([0-9.]+)", (ROOT / "requirements.txt").read_text(), re.M)[1]
    assert compat._release(oldest) <= compat._release(pinned)


def test_readme_states_the_tested_range_from_the_oldest_supported_torch(compat):
    """README names the oldest torch pyproject accepts, in the sentence that gives the tested range."""
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"(?i)tested on torch {re.escape(compat.oldest_supported())}\b", readme), "README's range is stale"


def test_the_newest_torch_is_the_highest_release_the_index_lists(compat, monkeypatch):
    """Numeric order (2.10 after 2.9); local builds (+cpu) and pre-releases left out."""
    listing = "torch (2.15.0)\nAvailable versions: 2.16.0rc1, 2.13.0+cpu, 2.9.1, 2.10.0, 2.4.1\n"
    monkeypatch.setattr(compat, "run", lambda *args, **kwargs: listing)
    assert compat.newest_available() == "2.10.0"


def test_make_compat_runs_the_script_and_make_test_does_not():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^compat: setup ## .+\n\t\$\(BIN\)/python tools/compat.py$", makefile, re.M)
    assert "compat" not in re.search(r"^test: (.*)##", makefile, re.M)[1]

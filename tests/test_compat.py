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
    assert re.search(rf"(?i)tested on torch {re.escape(compat.oldest_supported())}\b", readme), (
        "README's range is stale"
    )


def test_the_newest_torch_is_the_highest_release_the_index_lists(compat, monkeypatch):
    """Numeric order (2.10 after 2.9); local builds (+cpu) and pre-releases left out."""
    listing = "torch (2.15.0)\nAvailable versions: 2.16.0rc1, 2.13.0+cpu, 2.9.1, 2.10.0, 2.4.1\n"
    monkeypatch.setattr(compat, "run", lambda *args, **kwargs: listing)
    assert compat.newest_available() == "2.10.0"


def test_make_compat_runs_the_script_and_make_test_does_not():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^compat: setup ## .+\n\t\$\(BIN\)/python tools/compat.py$", makefile, re.M)
    assert "compat" not in re.search(r"^test: (.*)##", makefile, re.M)[1]


def test_the_nbval_run_uses_the_makefiles_flags(compat):
    """Strict nbval as `make nbval` runs it: the same flags and sanitize file."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^nbval: .*\n((?:\t.*\n)+)", makefile, re.M)[1].replace("\\\n", " ")
    assert " ".join(compat.NBVAL) in " ".join(recipe.split())
    assert "-n 2 --dist loadfile -p no:cacheprovider" in " ".join(recipe.split())


def test_the_one_test_left_out_in_a_compat_venv_exists(compat):
    """--deselect of a name that no longer exists is silent; the test would then fail on every other torch."""
    path, name = compat.PINNED_VENV_TEST.split("::")
    assert f"def {name}(" in (ROOT / path).read_text()


# Excerpts of strict nbval's report (pytest 9, --color=no): an output that differs, a cell that raised.
NBVAL_REPORT = """\
=================================== FAILURES ===================================
________________ notebooks/07_batches_and_shapes.ipynb::Cell 29 ________________
Notebook cell execution failed
Cell 29: Cell outputs differ

Input:
# NBVAL_RAISES_EXCEPTION
rnn_bf(torch.from_numpy(np.linspace(-1, 1, B * T * input_size).reshape(B, T, input_size)))

Traceback:
 mismatch 'evalue'

 assert reference_output == test_output failed:

  'RNN input dt...orch.float64)' == 'input must h...torch.float64'

  - input must have the type torch.float32, got type torch.float64
  + RNN input dtype (torch.float64) does not match weight dtype (torch.float32).

__________________ notebooks/05_stacked_layers.ipynb::Cell 18 __________________
Notebook cell execution failed
Cell 18: Cell outputs differ

Input:
helpers.compare("train mode: call 1 vs call 2", first, second)

Traceback:
 mismatch 'stdout'

 assert reference_output == test_output failed:

  '✗ train mode...diff <1e-6)\\n' == '✗ train mode...diff <1e-6)\\n'

  Skipping 61 identical leading characters in diff, use -v to show
  -  abs diff 5.9e-01)
  ?           ^ ^
  +  abs diff 8.7e-01)
  ?           ^ ^

_________________________ notebooks/05_stacked_layers.ipynb::Cell 4 _________________________
Notebook cell execution failed
Cell 4: Cell execution caused an exception

Input:
1/0

Traceback:

\x1b[31mZeroDivisionError\x1b[39m                         Traceback (most recent call last)
\x1b[31mZeroDivisionError\x1b[39m: division by zero

=========================== short test summary info ============================
FAILED notebooks/07_batches_and_shapes.ipynb::Cell 29 - Notebook cell execution f...
3 failed, 369 passed in 64.20s
"""


def test_each_differing_cell_gets_one_line_in_notebook_and_cell_order(compat):
    assert compat.differences(NBVAL_REPORT) == {
        "notebooks/05_stacked_layers.ipynb::Cell 4": "Cell execution caused an exception: ZeroDivisionError: division by zero",
        "notebooks/05_stacked_layers.ipynb::Cell 18": "printed text differs: now 'abs diff 5.9e-01)', stored 'abs diff 8.7e-01)'",
        "notebooks/07_batches_and_shapes.ipynb::Cell 29": "error message differs: now 'input must have the type "
        "torch.float32, got type torch.float64', stored 'RNN input dtype (torch.float64) does not match weight dtype "
        "(torch....'",
    }
    assert compat.differences("372 passed in 60.00s\n") == {}


def test_a_compat_venv_gets_every_other_pin_and_numpy_below_2_only_for_torch_before_2_3(compat):
    pins = (ROOT / "requirements.txt").read_text().splitlines()
    others = [line for line in pins if not line.startswith("torch==")]
    assert len(others) == len(pins) - 1
    assert compat.other_requirements("2.15.0") == compat.other_requirements("2.3.1") == others
    old = compat.other_requirements("2.2.2")
    assert "numpy<2" in old and not any(line.startswith(("numpy==", "torch")) for line in old)
    assert len(old) == len(others)

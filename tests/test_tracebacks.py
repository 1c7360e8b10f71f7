"""Errors that helpers raise reach a notebook as the student's line and the message, nothing of helpers.

Runs cells in a real kernel (the venv's python3, as `make execute` and nbval do) and reads the
tracebacks it stores; helpers._validate.student_facing is what this checks.
"""

import re
import traceback
from pathlib import Path

import nbformat
import pytest
import torch
from nbclient import NotebookClient

import helpers

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")  # colours, and OSC-8 links to files
# Each cell makes one mistake through a different public helper.
HELPER_MISTAKES = {
    "unroll": "helpers.unroll(nn.RNN(3, 2), torch.zeros(4, 5))",
    "hx": "helpers.unroll(nn.LSTM(3, 2), torch.zeros(4, 3), torch.zeros(1, 2))",
    "Trace.stack": "helpers.trace(nn.RNN(3, 2), torch.zeros(4, 3)).stack('c')",
    "pack_padded_sequence": "helpers.pack_padded_sequence(torch.zeros(3, 2, 1), [4, 1])",
    "plots": "helpers.plots.hidden_states(None, torch.zeros(2, 3, 4))",
    "explore": "helpers.widgets.explore(nn.RNN(1, 1), torch.zeros(3, 1), controls=['nothing'])",
    "data": "helpers.data.first_sign(0, 5)",
    "in a function": "def run(x):\n    return helpers.unroll(nn.GRU(3, 2), x)\nrun(torch.zeros(4, 5).long())",
    # ipywidgets.Output shows an error raised inside `with out:` so, skipping no frame.
    "tb_offset=0": "try:\n    helpers.data.first_sign(0, 5)\nexcept ValueError:\n"
    "    get_ipython().showtraceback(__import__('sys').exc_info(), tb_offset=0)",
}


@pytest.fixture(scope="module")
def errors(tmp_path_factory):
    """Run one notebook of mistakes in a kernel; return each cell's error output by name."""
    home = tmp_path_factory.mktemp("kernel")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("JUPYTER_PATH", str(ROOT / ".venv" / "share" / "jupyter"))
        env.setenv("IPYTHONDIR", str(home))  # no profile of the user's (e.g. %xmode) applies
        env.setenv("MPLBACKEND", "Agg")
        cells = ["import torch\nfrom torch import nn\n\nimport helpers"]
        cells += list(HELPER_MISTAKES.values())
        cells.append("nn.RNN(3, 2)(torch.zeros(4, 5))")  # torch's own error
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
        NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute(cwd=str(home))
    found = {}
    for name, cell in zip(["import", *HELPER_MISTAKES, "torch"], nb.cells, strict=True):
        error = [output for output in cell.outputs if output.output_type == "error"]
        found[name] = error[0] if error else None
    assert found.pop("import") is None, "the kernel could not import helpers"
    return found


@pytest.mark.parametrize("name", HELPER_MISTAKES)
def test_a_helpers_error_shows_the_students_line_and_the_message(errors, name):
    """The stored traceback is the cell's line, then 'ValueError: message': no frame inside helpers."""
    error = errors[name]
    assert error is not None, f"{name}: the cell raised nothing"
    assert error.ename in ("TypeError", "ValueError")
    lines = [ANSI.sub("", part) for part in error.traceback]
    text = "\n".join(lines)
    assert "helpers/" not in text and "_validate" not in text, text
    assert not re.search(r"^File ", text, flags=re.M), f"{name}: a frame outside the notebook:\n{text}"
    assert "Cell In[" in text
    assert lines[-1] == f"{error.ename}: {error.evalue}"


def test_torch_errors_keep_their_frames(errors):
    """An error raised inside torch still shows where torch raised it."""
    text = ANSI.sub("", "\n".join(errors["torch"].traceback))
    assert errors["torch"].ename == "RuntimeError"
    assert "torch/nn/modules/rnn.py" in text


def test_plain_python_shows_every_frame():
    """Outside IPython (pytest, scripts) the full traceback stays, for whoever debugs helpers."""
    with pytest.raises(ValueError) as caught:
        helpers.unroll(torch.nn.RNN(3, 2), torch.zeros(4, 5))
    assert type(caught.value) is ValueError
    text = "".join(traceback.format_exception(caught.value))
    assert "_validate.py" in text and "check_input" in text

"""Stored outputs and built decks hold no path of the machine that made them.

A traceback stored from a torch error names torch's files; `make execute` rewrites their paths
(tools/clean_outputs.py) to `torch/...`. These tests fail on any output of
notebooks/NN_*.ipynb, or any deck in build/slides/, that still holds the home folder, the
temporary folder, this checkout, the venv, or a path that looks like another machine's.
Decks are read, not built: without `make slides` (which `make test` runs first) they are skipped.
"""

import json
import re
import sys
import tempfile
from pathlib import Path

import pytest
from clean_outputs import clean_text, join_streams  # tools/clean_outputs.py (pyproject.toml's pythonpath)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DECKS = sorted((ROOT / "build" / "slides").glob("*.slides.html"))

# This machine's folders, as stored and as IPython writes them (~ for the home folder).
HOME = str(Path.home())
FOLDERS = {str(ROOT), str(ROOT / ".venv"), sys.prefix, tempfile.gettempdir(), HOME}
FOLDERS = {f.rstrip("/\\") for f in FOLDERS if len(Path(f).parts) > 1}
FOLDERS |= {"~" + f[len(HOME) :] for f in FOLDERS if f.startswith(HOME + "/")}
MACHINE = re.compile(
    "|".join(re.escape(f) + r"(?=[/\\]|[^\w.\-]|$)" for f in sorted(FOLDERS, key=len, reverse=True))
    # Any machine's: user and temp folders, this project's machine's /work, an installed package
    # under an absolute path, a Windows user folder, a venv.
    + r"|(?<![\w.])/(?:home|root|tmp|work|Users|private/var/folders)/"
    + r"|(?:^|[\s\"'(=\[>]|\x1b\[[0-9;]*m)(?:[A-Za-z]:)?[/\\~][^\s\"'<>]*?[/\\](?:site|dist)-packages"
    + r"|[A-Za-z]:\\+Users\\|[/\\]\.venv[/\\]",
)
BASE64 = re.compile(r"[A-Za-z0-9+/=]{200,}")  # images inside outputs and decks: skip them
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def machine_paths(text):
    """The machine paths in `text`, each with a little context."""
    text = ANSI.sub("", BASE64.sub("", text))
    return [text[max(m.start() - 30, 0) : m.end() + 40] for m in MACHINE.finditer(text)]


def output_texts(output):
    """The text of one stored output: traceback, message, stream, text/* data (not images)."""
    if output["output_type"] == "error":
        return [output["evalue"], *output["traceback"]]
    if output["output_type"] == "stream":
        return ["".join(output["text"])]
    data = output.get("data", {})
    return ["".join(v) if isinstance(v, list) else str(v) for k, v in data.items() if k.startswith("text/")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_hold_no_machine_path(path):
    """No output of the notebook names this machine's folders (re-run with make execute)."""
    found = []
    for number, cell in enumerate(json.loads(path.read_text())["cells"]):
        for output in cell.get("outputs", []):
            for text in output_texts(output):
                found += [f"cell {number} ({output['output_type']}): {hit!r}" for hit in machine_paths(text)]
    assert not found, f"{path.name}: {len(found)} machine path(s); `make execute` cleans them:\n" + "\n".join(found)


@pytest.mark.skipif(not DECKS, reason="build/slides/ has no decks: run `make slides` first")
@pytest.mark.parametrize("deck", DECKS, ids=lambda p: p.name)
def test_decks_hold_no_machine_path(deck):
    """No built deck names this machine's folders (its vendor files are linked by relative paths)."""
    found = machine_paths(deck.read_text())
    assert not found, f"{deck.name}: {len(found)} machine path(s):\n" + "\n".join(map(repr, found))


@pytest.mark.parametrize(
    "text",
    [
        f"\x1b[32m{ROOT}/.venv/lib/python3.11/site-packages/torch/nn/modules/rnn.py:739\x1b[39m, in RNN.forward",
        f"File {ROOT}/helpers/unroll.py:124, in unroll",
        f"{tempfile.gettempdir()}/ipykernel_4012/1234.py:3: UserWarning: careful",
        f"{HOME}/.cache/torch/hub",
        "/usr/lib/python3/dist-packages/numpy/core.py:3",
        r"C:\Users\ana\rnns\.venv\Lib\site-packages\torch\nn\modules\rnn.py:739",
        "\x1b]8;;file:///work/x/helpers/unroll.py\x1b\\unroll.py\x1b]8;;\x1b\\",
    ],
)
def test_the_check_finds_machine_paths_and_the_cleaner_removes_them(text):
    """Each kind of path is caught here, and tools/clean_outputs.py leaves none of it behind."""
    assert machine_paths(text), text
    cleaned = clean_text(text)
    assert not machine_paths(cleaned), cleaned


@pytest.mark.parametrize(
    "text", ["/home/ana/rnns/x.py", "/Users/ana/x.py", r"C:\Users\ana\x.py", "/work/other/x.py", "/x/.venv/bin/python"]
)
def test_the_check_finds_other_machines_paths(text):
    """Paths of other machines are caught too (the cleaner knows only the machine it runs on)."""
    assert machine_paths(text), text


def test_the_cleaner_keeps_the_rest():
    """Messages, colours and relative paths stay as they were; cleaning twice changes nothing."""
    line = f"\x1b[31mRuntimeError\x1b[39m: input.size(-1) must be equal to input_size. Expected 3, got 5 in {ROOT}/x.py"
    assert (
        clean_text(line)
        == "\x1b[31mRuntimeError\x1b[39m: input.size(-1) must be equal to input_size. Expected 3, got 5 in x.py"
    )
    frame = f"File {ROOT}/.venv/lib/python3.11/site-packages/torch/nn/modules/rnn.py:739"
    assert clean_text(frame) == "File torch/nn/modules/rnn.py:739"
    stdlib = f"File {ROOT}/.venv/lib/python3.11/asyncio/events.py:88"
    assert clean_text(stdlib) == "File python3.11/asyncio/events.py:88"
    assert clean_text(clean_text(frame)) == clean_text(frame)
    assert clean_text("a / b, helpers/unroll.py, 1/2") == "a / b, helpers/unroll.py, 1/2"


def test_the_cleaner_joins_a_cells_printed_chunks_per_stream():
    """stdout chunks in a row become one output; a stderr chunk or a result between them keeps them apart."""
    import nbformat

    out = nbformat.v4.new_output
    outputs = [
        out("stream", name="stdout", text="h_1 = "),
        out("stream", name="stdout", text="tensor([0.5])\n"),
        out("stream", name="stderr", text="warning\n"),
        out("stream", name="stdout", text="a\n"),
        out("execute_result", data={"text/plain": "1"}, execution_count=1),
        out("stream", name="stdout", text="b\n"),
    ]
    joined = join_streams(outputs)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in joined] == [
        ("stream", "stdout", "h_1 = tensor([0.5])\n"),
        ("stream", "stderr", "warning\n"),
        ("stream", "stdout", "a\n"),
        ("execute_result", None, None),
        ("stream", "stdout", "b\n"),
    ]

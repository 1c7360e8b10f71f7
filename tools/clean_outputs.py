"""Rewrite the paths of the machine that ran a notebook out of its stored outputs.

`make execute` runs this on each notebook right after nbconvert has executed it:

    python tools/clean_outputs.py notebooks/07_batches_and_shapes.ipynb ...

A torch frame in a traceback, `/home/ana/rnns/.venv/lib/python3.11/site-packages/torch/nn/modules/rnn.py:739`,
is stored as `torch/nn/modules/rnn.py:739`, the path inside the installed packages (a standard
library file as `python3.11/...`); a file of this checkout as its path
relative to the checkout (`helpers/unroll.py`); other paths under the temporary folder or the
home folder as `…/rest` and `~/rest`. Only the text of outputs changes (tracebacks, error
messages, streams, text/* data); links to local files (OSC-8 escapes) are dropped, keeping
their text. Cell ids, sources, metadata, images and widget state are left as they are, and a
notebook with nothing to rewrite is not written at all.

It also joins a cell's consecutive printed outputs of one stream (stdout or stderr) into one. The
kernel sends printed text in chunks whose boundaries depend on timing, so one run may store
`h_1 = ` and `tensor(...)` as two outputs, which a slide then shows on two lines.
"""

import re
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent  # the checkout
SEP = r"[/\\]"
# An absolute path's start (/, ~/ or C:\), then path characters; never across an escape code.
PATH = r"(?:[A-Za-z]:[/\\]|~[/\\]|/)[^\s\"'<>|\x1b]*?"
OSC8_LINK = re.compile(r"\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)")


def _folder(path, inside, itself):
    """A rule for `path` (also as IPython writes it, ~ for the home folder): a path inside it
    becomes `inside` + the rest, the folder itself `itself`."""
    text, home = str(path).rstrip("/\\"), str(Path.home())
    forms = {text} | ({"~" + text[len(home) :]} if text.startswith(home + "/") else set())
    names = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    pattern = re.compile(rf"(?:{names})(?:({SEP})|(?![\w\-]|\.\w))")
    return pattern, lambda match: inside if match[1] else itself


# (pattern, replacement) in order: the most specific first.
RULES = [
    (re.compile(PATH + rf"{SEP}(?:site|dist)-packages{SEP}"), ""),  # installed packages: torch/nn/...
    (re.compile(PATH + rf"{SEP}lib{SEP}(python3\.\d+)({SEP})"), r"\1\2"),  # the standard library: python3.11/...
    *(
        _folder(*rule)
        for rule in [(ROOT, "", "."), (tempfile.gettempdir(), "…/", "…"), (Path.home(), "~/", "~")]
        if len(Path(rule[0]).parts) > 1  # never a rule for "/" itself (HOME=/ in some containers)
    ),
]


def clean_text(text):
    """`text` with the machine's paths rewritten (see the module docstring)."""
    text = OSC8_LINK.sub("", text)
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def clean_output(output):
    """Rewrite the text parts of one output in place; return True if anything changed."""
    before = repr(output)
    if output.output_type == "error":
        output.evalue = clean_text(output.evalue)
        output.traceback = [clean_text(line) for line in output.traceback]
    elif output.output_type == "stream":
        output.text = clean_text(output.text)
    else:  # execute_result, display_data: only text mimetypes (images are base64, widgets JSON)
        for mimetype, value in output.get("data", {}).items():
            if mimetype.startswith("text/"):
                output.data[mimetype] = clean_text(value)
    return repr(output) != before


def join_streams(outputs):
    """`outputs` with each run of consecutive stream outputs of the same name joined into one."""
    joined = []
    for output in outputs:
        last = joined[-1] if joined else None
        if output.output_type == "stream" and last and last.output_type == "stream" and last.name == output.name:
            last.text += output.text
        else:
            joined.append(output)
    return joined


def clean_notebook(path):
    """Clean every output of the notebook at `path`; write it back only if something changed."""
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    changed = 0
    for cell in nb.cells:
        if "outputs" in cell:
            joined = join_streams(cell.outputs)
            changed += len(cell.outputs) - len(joined)
            cell.outputs = joined
            changed += sum(clean_output(o) for o in cell.outputs)
    if changed:
        nbformat.write(nb, path)
    return changed


def main(paths):
    for path in paths:
        count = clean_notebook(path)
        if count:
            print(f"{path}: {count} output(s) cleaned (machine paths rewritten, printed chunks joined)")


if __name__ == "__main__":
    main(sys.argv[1:])

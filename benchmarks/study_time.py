"""Estimate how long a careful student needs for each notebook (python benchmarks/study_time.py).

A careful student reads every sentence, runs and reads every cell, writes each prediction down
before running its cell, and does every exercise. The estimate counts that work in each notebook
and times it at a stated pace:

    minutes = words of prose / 200 + lines of code / 10 + 2 * predictions
              + 3 * exercises answered with a value + 10 * functions to write

- 200 words a minute: reading to learn. Carver's "learning" rate for college readers (R. P. Carver,
  "Reading rate: theory, research, and practical implications", Journal of Reading 36(2), 1992),
  below the 238 words a minute of silent reading of non-fiction (M. Brysbaert, "How many words do
  we read per minute?", Journal of Memory and Language 109, 2019), as text with equations needs.
- 10 lines a minute: reading a code cell, running it and reading what it prints (a line that is
  blank or only a comment is not counted).
- 2 minutes a prediction, on paper; 3 minutes an exercise answered with a value; 10 minutes a
  function written and checked (a first try, the check's message, a fix).

Checked against one timed run: a careful student took 75 to 90 minutes for notebook 13, which this
pace puts at 85. An earlier total of 7 hours for notebooks 01 to 12, from a student who worked
faster, is not used: at this pace those notebooks take about 11 hours. Each notebook's first cell
and the README state its estimate, rounded to 5 minutes (tests/test_notebooks.py holds them equal).
"""

import json
import re
from pathlib import Path

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WORDS_PER_MINUTE = 200
LINES_PER_MINUTE = 10
PREDICTION, VALUE_EXERCISE, WRITTEN_FUNCTION = 2, 3, 10  # minutes each


def counts(cells):
    """(words of prose, lines of code, predictions, value exercises, functions to write) in a notebook's cells."""
    prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lines = sum(
        1 for source in code for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )
    functions = sum("check_code(" in source for source in code)
    exercises = len(re.findall(r"^\*\*\d+\. ", prose, flags=re.M))  # numbered exercises, a function's included
    return len(re.findall(r"\w+", prose)), lines, len(re.findall(r"Predict", prose)), exercises - functions, functions


def minutes(cells):
    """The study time of some cells at the module's pace, unrounded."""
    words, lines, predictions, values, functions = counts(cells)
    return (
        words / WORDS_PER_MINUTE
        + lines / LINES_PER_MINUTE
        + PREDICTION * predictions
        + VALUE_EXERCISE * values
        + WRITTEN_FUNCTION * functions
    )


def estimates():
    """Notebook file name -> minutes, rounded to 5."""
    return {path.name: 5 * round(minutes(json.loads(path.read_text())["cells"]) / 5) for path in NOTEBOOKS}


if __name__ == "__main__":
    times = estimates()
    for name, estimate in times.items():
        print(f"{name:36} about {estimate} minutes")
    print(f"{'all':36} about {sum(times.values())} minutes ({sum(times.values()) / 60:.1f} hours)")

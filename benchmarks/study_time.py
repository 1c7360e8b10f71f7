"""Estimate how long a careful student needs for each notebook (python benchmarks/study_time.py).

One careful student worked through notebooks 01 to 12, doing every paper table, prediction and
exercise, in about 7 hours (25 to 45 minutes per notebook). This script spreads that measured
total over those notebooks in proportion to the work each one asks for:

    work = words of prose / 120 + 0.4 * code cells + 1.5 * predictions + 3 * exercises  (minutes)

(120 words a minute is a careful reading pace for text with equations; a prediction asks for a
number or a table on paper; an exercise is answered and checked in a cell). Each notebook's
share of 420 minutes, rounded to 5, is the time its first cell and the README state. A notebook
added after that measurement (13 on) gets its work at the same rate of minutes per unit of work,
so adding a notebook leaves the others' times as they were.
"""

import json
import re
from pathlib import Path

MEASURED_TOTAL = 420  # minutes: notebooks 01 to 12, one careful student
MEASURED = 12  # the notebooks that total covers: 01 to 12
NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def work(path):
    """The work a notebook asks for, in unscaled minutes (see the module docstring)."""
    cells = json.loads(path.read_text())["cells"]
    prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    words = len(re.findall(r"\w+", prose))
    code = sum(c["cell_type"] == "code" for c in cells)
    predictions = len(re.findall(r"Predict", prose))
    exercises = len(re.findall(r"^\*\*\d+\. ", prose, flags=re.M))
    return words / 120 + 0.4 * code + 1.5 * predictions + 3 * exercises


def estimates():
    """Notebook file name -> minutes, rounded to 5; notebooks 01 to 12 sum to about MEASURED_TOTAL."""
    raw = {path.name: work(path) for path in NOTEBOOKS}
    scale = MEASURED_TOTAL / sum(minutes for name, minutes in raw.items() if int(name[:2]) <= MEASURED)
    return {name: 5 * round(minutes * scale / 5) for name, minutes in raw.items()}


if __name__ == "__main__":
    times = estimates()
    for name, minutes in times.items():
        print(f"{name:36} about {minutes} minutes")
    print(f"{'all':36} about {sum(times.values())} minutes")

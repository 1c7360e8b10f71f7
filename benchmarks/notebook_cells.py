"""Time every code cell of the notebooks that train a model (make bench).

    python benchmarks/notebook_cells.py notebooks/09_sequence_model.ipynb notebooks/13_text_to_predictions.ipynb

Runs each notebook's code cells in order in one fresh namespace, in this process, as a kernel
would (matplotlib's Agg backend: nothing displayed; what the cells print is discarded), and
prints each notebook's total and its slowest cells with their first line. A cell tagged raises-exception is expected to raise; any
other error stops the run. The numbers are wall-clock seconds on this machine, one run each.
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SLOWEST = 3  # cells listed per notebook


def time_cells(path):
    """[(seconds, first line)] for each code cell of the notebook at `path`, run in order."""
    cells = json.loads(Path(path).read_text())["cells"]
    namespace = {"__name__": "__main__"}
    timings = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        expected_error = "raises-exception" in cell["metadata"].get("tags", [])
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"{Path(path).name} cell", "exec"), namespace)
        except Exception:
            if not expected_error:
                raise
        timings.append((time.perf_counter() - start, source.splitlines()[0]))
        plt.close("all")
    return timings


def main(paths):
    for path in paths:
        timings = time_cells(path)
        print(f"{Path(path).name}: {len(timings)} code cells in {sum(s for s, _ in timings):.1f} s")
        for seconds, line in sorted(timings, reverse=True)[:SLOWEST]:
            print(f"  {seconds:6.2f} s  {line[:90]}")


if __name__ == "__main__":
    main(sys.argv[1:])

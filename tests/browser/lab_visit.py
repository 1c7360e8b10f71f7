"""One JupyterLab visit per notebook, shared by test_lab_accessibility.py and test_browser.py.

Opening a notebook in JupyterLab (the page, its kernel) is the costly part of both tests, so each
notebook is opened once (conftest.py's `notebook_in_lab` caches the visit per worker; a lesson's tests
run on one worker, conftest.py's groups) and, in that order:
- content: as it opens, from its stored outputs (nothing has run yet), axe-core on the notebook's
  content (test_lab_accessibility.py's check, for the lessons);
- run: Run All, then ArrowRight on the first explorer's slider (test_browser.py's check, for the
  notebooks with widgets).
Each step's result, or the error it raised, is kept for the test that asserts on it.
"""

import contextlib
import json
from pathlib import Path

from lab import IDLE, KERNEL_READY_JS, ROOT, SHOTS, check_cells, run_all, shut_down_kernels


class Visit:
    """What each step of a notebook's visit found: content() and ran() return it or raise its error."""

    def __init__(self, notebook):
        self.notebook, self.outcomes = notebook, {}

    def record(self, step, function):
        try:
            self.outcomes[step] = (None, function())
        except Exception as error:  # kept for the test of that step; the visit goes on to the next step
            self.outcomes[step] = (error, None)

    def get(self, step):
        assert step in self.outcomes, f"{self.notebook}: step {step!r} was not part of its JupyterLab visit"
        error, value = self.outcomes[step]
        if error is not None:
            raise error
        return value

    def content(self):
        """(flagged, images): test_lab_accessibility.known_gaps of axe-core's violations, and each output img's alt."""
        return self.get("content")

    def ran(self):
        """None once Run All left no unexpected error and ArrowRight on the first slider changed the plot's pixels."""
        return self.get("run")


def check_content(page):
    """The lesson as it opened (stored outputs, every cell in the DOM): axe-core's findings and the figures' alt texts."""
    from test_lab_accessibility import AXE, OPTIONS, SETTLED_JS, THIRD_PARTY, known_gaps

    page.wait_for_function(SETTLED_JS)
    page.wait_for_function("() => !document.querySelector('.MathJax_Processing, mjx-container[jax] .mjx-processing')")
    page.wait_for_timeout(1500)  # widgets from the saved state render after the cells
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async options => (await axe.run(document.querySelector('.jp-NotebookPanel-notebook'), options)).violations",
        OPTIONS,
    )
    flagged = known_gaps(page, violations, THIRD_PARTY)
    images = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output img')].map(i => i.alt)")
    return flagged, images


def check_run(page, notebook, shots):
    """Run All leaves no unexpected error; ArrowRight on the first slider changes the plot's pixels."""
    from test_browser import move_first_slider

    page.locator(IDLE).wait_for()
    page.wait_for_function(KERNEL_READY_JS, arg=notebook)
    check_cells(run_all(page, notebook))
    page.screenshot(path=shots / "page-after-run-all.png", full_page=True)
    move_first_slider(page, shots)


def visit(lab, browser, notebook, content, run):
    """Open `notebook` (repo-relative) in JupyterLab once; check its content if `content`, then run it if `run`."""
    url, token, _ = lab
    shots = SHOTS / Path(notebook).stem
    if run:
        shots.mkdir(parents=True, exist_ok=True)
    found = Visit(notebook)
    page = browser.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")  # ?reset: no old workspace
        if content:
            found.record("content", lambda: check_content(page))
        if run:
            found.record("run", lambda: check_run(page, notebook, shots))
    finally:
        if run:
            with contextlib.suppress(Exception):  # a failed screenshot must not hide the test's own error
                page.screenshot(path=shots / "page.png", full_page=True)
        page.close()
        with contextlib.suppress(OSError):
            shut_down_kernels(url, token)  # opening the notebook started one; the next gets the cores to itself
    return found


def lessons():
    """The lessons, repo-relative: test_lab_accessibility.py checks each one's content."""
    return [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]


def shown_figures(notebook):
    """How many PNG figures the notebook's stored outputs hold."""
    cells = json.loads((ROOT / notebook).read_text())["cells"]
    return sum("image/png" in output.get("data", {}) for cell in cells for output in cell.get("outputs", []))

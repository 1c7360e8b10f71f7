"""Real browser: every widget notebook runs in JupyterLab and in Voila, and a slider redraws the plot.

Run by `make test-browser` only (tests/conftest.py keeps it out of `make unit`). JupyterLab runs
from the venv and also serves Voila (`/voila/render/<path>`, Voila's server extension); HOME,
Jupyter's folders and TMPDIR live in a fresh folder under build/ that is removed afterwards
(conftest.py's fixtures; slides/lab.py starts the server and the browser).
Screenshots and the server log stay in build/browser/ (Voila's in build/browser/voila/).
"""

import contextlib
import json
from pathlib import Path

import pytest
from lab import (  # slides/lab.py: the server, the browser, Run All, the explorer's slider
    IDLE,
    OFF_MACHINE,
    PRESSES,
    ROOT,
    RUN_ALL_MS,
    SHOTS,
    call,
    check_cells,
    first_explorer,
    pixels_differ,
    readout_value,
    wait_for_new_plot,
)

FIXTURE = Path(__file__).with_name("fixture_widget.ipynb")
# Voila: each rendered cell (cell-index counts from 1, markdown too) and the error blocks in it.
# Voila drops stderr streams and shows an error as a stderr block with a generic message (no
# traceback unless show_tracebacks; the server log has it); a widget that fails to render is one too.
VOILA_CELLS_JS = """() => [...document.querySelectorAll("#rendered_cells [cell-index]")].map(div => ({
  index: Number(div.getAttribute("cell-index")),
  errors: [...div.querySelectorAll("[data-mime-type='application/vnd.jupyter.stderr']")].map(e => e.innerText.trim()),
}))"""


def widget_notebooks():
    """The fixture, then each notebook whose code uses ipywidgets or helpers.widgets (repo-relative)."""
    found = [FIXTURE]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        if "helpers.widgets" in code or "ipywidgets" in code:
            found.append(path)
    return [path.relative_to(ROOT).as_posix() for path in found]


def voila_cells(page, notebook):
    """The notebook's code cells in lab.CELLS_JS's form, with the errors Voila shows; count None if not rendered."""
    shown = {cell["index"]: cell["errors"] for cell in page.evaluate(VOILA_CELLS_JS)}
    cells = json.loads((ROOT / notebook).read_text())["cells"]
    return [
        {
            "source": "".join(cell["source"]),
            "tags": cell["metadata"].get("tags", []),
            "count": index if index in shown else None,  # Voila stops rendering at an untagged error
            "errors": shown.get(index, []),
        }
        for index, cell in enumerate(cells, 1)
        if cell["cell_type"] == "code"
    ]


def move_first_slider(page, shots, idle=IDLE):
    """Press ArrowRight on the first explorer's first slider; assert the readout grew and the plot's pixels changed."""
    explorer = first_explorer(page)
    slider = explorer.locator(".widget-slider").first
    readout = slider.locator(".widget-readout")
    image = explorer.locator("img.widget-image").first
    image.scroll_into_view_if_needed()
    image.evaluate("img => img.decode()")
    old_src, old_value = image.get_attribute("src"), readout_value(readout)
    before = image.screenshot(path=shots / "image-before.png")

    slider.locator(".noUi-handle").focus()  # keyboard only: no drag
    for _ in range(PRESSES):
        page.keyboard.press("ArrowRight")
    wait_for_new_plot(page, image, old_src, idle)
    after = image.screenshot(path=shots / "image-after.png")

    assert readout_value(readout) > old_value, "ArrowRight did not move the slider"
    assert pixels_differ(before, after), "the plot's pixels did not change"


def test_jupyterlab_opens_without_the_news_question(lab, browser):
    """No "Would you like to get notified about official Jupyter news?" pop-up: make setup's settings answer it."""
    url, token, _ = lab
    page = browser.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}/lab?reset&token={token}")
        page.wait_for_function("() => window.jupyterapp")
        page.evaluate("() => window.jupyterapp.restored")  # JupyterLab asks right after this
        page.wait_for_timeout(3000)
        page.screenshot(path=SHOTS / "jupyterlab-start.png")
        assert page.get_by_text("official Jupyter news").count() == 0, "JupyterLab asked about news"
        defaults = page.evaluate(
            """async () => (await window.jupyterapp.serviceManager.settings.fetch(
                 "@jupyterlab/apputils-extension:notification")).schema.properties"""
        )
        assert defaults["fetchNews"]["default"] == "false" and defaults["checkForUpdates"]["default"] is False
    finally:
        page.close()


@pytest.mark.parametrize("notebook", widget_notebooks())
def test_notebook_runs_and_its_first_slider_redraws_the_plot(notebook_in_lab, notebook):
    """Run All leaves no unexpected error; ArrowRight on the first slider changes the plot's pixels.

    In the notebook's one JupyterLab visit (lab_visit.py), after test_lab_accessibility.py's check of its
    content as it opened; screenshots in build/browser/NN_name/."""
    notebook_in_lab(notebook).ran()


# The notebooks Voila renders: one per kind of widget view that widget_notebooks() show (see the test).
VOILA = [
    FIXTURE.relative_to(ROOT).as_posix(),
    "notebooks/01_scalar_rnn.ipynb",
    "notebooks/06_stacked_bidirectional.ipynb",
    "notebooks/10_lstm.ipynb",
    "notebooks/12_gradients_through_time.ipynb",
]


def test_the_voila_notebooks_are_widget_notebooks():
    """Each notebook VOILA names still exists and shows widgets (a renamed lesson must not drop out unseen)."""
    assert set(VOILA) <= set(widget_notebooks()), sorted(set(VOILA) - set(widget_notebooks()))


@pytest.mark.parametrize("notebook", VOILA)
def test_voila_renders_the_notebook_and_its_first_slider_redraws_the_plot(lab, browser, notebook):
    """Voila runs every cell with no unexpected error; ArrowRight on the first slider changes the plot's pixels.

    One notebook per kind of widget view, not all of widget_notebooks() (each Voila render runs the whole
    notebook: about 16 s apiece). Every one of them runs in JupyterLab (test_notebook_runs_...), whose
    kernel-side code is the same; what Voila adds is rendering the widgets in its own page. The kinds:
    - plain ipywidgets (a FloatSlider beside an Image that matplotlib redraws): fixture_widget.ipynb;
    - helpers.widgets.Explorer (explore()) of a one-layer, one-direction layer, a single plot with its
      weight sliders: 01 (02 and 03 show the same views, with more lines or sliders);
    - an Explorer's grid of plots, a row per layer and a column per direction: 06 (stacked and
      bidirectional; 04 and 05 are its one-row and one-column cases);
    - an Explorer of a gated layer, its sliders labelled with their gate and unit ("bias_hh_l0[1] f[0]"):
      10 (LSTM, chosen controls; 11's GRU takes the same path);
    - helpers.widgets.Panel (panel()): a figure redrawn by its own controls (a SelectionSlider and
      ToggleButtons): 12.
    """
    url, token, _ = lab
    shots = SHOTS / "voila" / Path(notebook).stem
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page()
    page.set_default_timeout(60_000)
    page.route(OFF_MACHINE, lambda route: route.abort())  # the test stays offline, wherever it runs
    try:
        # Voila runs the cells while it streams the page; #rendered_cells shows once all are in.
        page.goto(f"{url}/voila/render/{notebook}?token={token}", wait_until="commit")
        page.locator("#rendered_cells").wait_for(state="visible", timeout=RUN_ALL_MS)
        check_cells(voila_cells(page, notebook))
        page.locator("img.widget-image").first.wait_for(state="visible")
        page.screenshot(path=shots / "page-after-render.png", full_page=True)
        move_first_slider(page, shots, idle=None)  # Voila's page has no kernel-status indicator
    finally:
        with contextlib.suppress(Exception):
            page.screenshot(path=shots / "page.png", full_page=True)
            # Voila's own shutdown on page close gets 403 from Jupyter server (no _xsrf; voila#1458).
            kernel = json.loads(page.locator("#jupyter-config-data").text_content())["kernelId"]
            call(f"{url}/api/kernels/{kernel}", token, method="DELETE")
        page.close()
